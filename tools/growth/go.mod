module github.com/muster-io/muster/tools/growth

go 1.26.0

require (
	github.com/muster-io/muster v0.0.0
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/cockroachdb/datadriven v1.0.3-0.20250407164829-2945557346d5 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

// The tool measures muster's own packages (internal ones included: its import path lies under
// github.com/muster-io/muster/, so Go's internal-import rule allows it) from this source tree.
replace github.com/muster-io/muster => ../..
