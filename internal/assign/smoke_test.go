package assign

import (
	"math/rand/v2"
	"testing"
)

func TestSmoke(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		for _, a := range []Assignor{Uniform(), Range()} {
			spec, md := randomSpec(r, i%2 == 1)
			out, err := a.Assign(spec, md)
			if err != nil {
				t.Fatal(err)
			}
			check(t, spec, md, out)
			out2, err := a.Assign(withCurrent(spec, out), md)
			if err != nil {
				t.Fatal(err)
			}
			check(t, spec, md, out2)
		}
	}
}
