package wire

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestErrorCodes(t *testing.T) {
	collect := func(r kmsg.Response) []int16 {
		var out []int16
		ErrorCodes(r, func(c int16, n int) {
			for range n {
				out = append(out, c)
			}
		})
		return out
	}
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.ErrorCode = 27
	if got := collect(hb); !reflect.DeepEqual(got, []int16{27}) {
		t.Errorf("Heartbeat: %v", got)
	}
	oc := kmsg.NewPtrOffsetCommitResponse()
	for _, code := range [][]int16{{0, 3}, {0}} {
		tp := kmsg.NewOffsetCommitResponseTopic()
		for _, c := range code {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.ErrorCode = c
			tp.Partitions = append(tp.Partitions, p)
		}
		oc.Topics = append(oc.Topics, tp)
	}
	if got := collect(oc); !reflect.DeepEqual(got, []int16{0, 3, 0}) {
		t.Errorf("OffsetCommit: %v", got)
	}
	// A nested pointer (ConsumerGroupHeartbeat's Assignment has no code) and a top-level code.
	cg := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	cg.ErrorCode = 25
	cg.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
	if got := collect(cg); !reflect.DeepEqual(got, []int16{25}) {
		t.Errorf("ConsumerGroupHeartbeat: %v", got)
	}
	if got := collect(nil); got != nil {
		t.Errorf("nil: %v", got)
	}
	// Every response type of every supported key can be walked (empty values).
	for _, a := range Supported {
		r := kmsg.ResponseForKey(a.Key)
		if r == nil {
			t.Fatalf("no response type for key %d", a.Key)
		}
		collect(r)
	}
}

// TestErrorCodesMatchReflection fills every supported response type with random nested
// values and checks the planned walk (field offsets) against a plain reflection walk.
func TestErrorCodesMatchReflection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range Supported {
		for range 20 {
			r := kmsg.ResponseForKey(a.Key)
			fillRandom(reflect.ValueOf(r).Elem(), rng, 0)
			var want, got []int16
			reflectCodes(reflect.ValueOf(r).Elem(), &want)
			ErrorCodes(r, func(c int16, n int) {
				for range n {
					got = append(got, c)
				}
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("key %d: walk %v, reflection %v", a.Key, got, want)
			}
		}
	}
}

// fillRandom sets the exported int16, slice-of-struct, struct and pointer-to-struct fields of
// struct v at random (codes from a small set, so that runs of equal codes occur).
func fillRandom(v reflect.Value, rng *rand.Rand, depth int) {
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int16:
			f.SetInt(int64(rng.IntN(3)))
		case reflect.Struct:
			fillRandom(f, rng, depth+1)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.Struct && depth < 4 {
				n := rng.IntN(4)
				s := reflect.MakeSlice(f.Type(), n, n)
				for j := range n {
					fillRandom(s.Index(j), rng, depth+1)
				}
				f.Set(s)
			}
		case reflect.Pointer:
			if f.Type().Elem().Kind() == reflect.Struct && depth < 4 && rng.IntN(2) == 0 {
				e := reflect.New(f.Type().Elem())
				fillRandom(e.Elem(), rng, depth+1)
				f.Set(e)
			}
		}
	}
}

// reflectCodes appends the ErrorCode fields of struct v in the walk's order: the struct's own
// codes, then nested structs, then slices, then pointers.
func reflectCodes(v reflect.Value, out *[]int16) {
	var structs, slices, ptrs []reflect.Value
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int16:
			if sf.Name == "ErrorCode" {
				*out = append(*out, int16(f.Int()))
			}
		case reflect.Struct:
			structs = append(structs, f)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.Struct {
				slices = append(slices, f)
			}
		case reflect.Pointer:
			if f.Type().Elem().Kind() == reflect.Struct {
				ptrs = append(ptrs, f)
			}
		}
	}
	for _, f := range structs {
		reflectCodes(f, out)
	}
	for _, f := range slices {
		for j := 0; j < f.Len(); j++ {
			reflectCodes(f.Index(j), out)
		}
	}
	for _, f := range ptrs {
		if !f.IsNil() {
			reflectCodes(f.Elem(), out)
		}
	}
}

func BenchmarkErrorCodesHeartbeat(b *testing.B) {
	r := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	n := 0
	for b.Loop() {
		ErrorCodes(r, func(_ int16, k int) { n += k })
	}
}

// BenchmarkErrorCodesOffsetFetch walks an OffsetFetch response of one group with 1000
// partitions (the fetch-all benchmark's answer).
func BenchmarkErrorCodesOffsetFetch(b *testing.B) {
	r := kmsg.NewPtrOffsetFetchResponse()
	r.Version = 9
	g := kmsg.NewOffsetFetchResponseGroup()
	t := kmsg.NewOffsetFetchResponseGroupTopic()
	t.Partitions = make([]kmsg.OffsetFetchResponseGroupTopicPartition, 1000)
	g.Topics = append(g.Topics, t)
	r.Groups = append(r.Groups, g)
	n := 0
	for b.Loop() {
		ErrorCodes(r, func(_ int16, k int) { n += k })
	}
}
