package wire

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorCodes calls fn with the count of every error code a response carries (every int16
// field named ErrorCode, at the top level and in nested structs and slices, e.g. each partition
// of an OffsetCommit response), NONE (0) included: Kafka's AbstractResponse.errorCounts, which
// its RequestMetrics ErrorsPerSec counts. Equal codes in a row are reported once with their
// count (a code may be reported more than once). The walk of each response type is planned
// once (by reflection) and cached.
func ErrorCodes(resp kmsg.Response, fn func(code int16, n int)) {
	if resp == nil {
		return
	}
	v := reflect.ValueOf(resp)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	t := v.Type().Elem()
	var p *errPlan
	k := resp.Key()
	if k >= 0 && int(k) < len(plansByKey) {
		if c := plansByKey[k].Load(); c != nil && c.typ == t {
			p = c
		}
	}
	if p == nil {
		p = planFor(t)
		if k >= 0 && int(k) < len(plansByKey) {
			plansByKey[k].Store(p)
		}
	}
	if !p.empty {
		r := run{fn: fn}
		p.walk(v.UnsafePointer(), &r)
		r.flush()
	}
}

// plansByKey caches the plan of each key's response type (the sync.Map is the slow path).
var plansByKey [128]atomic.Pointer[errPlan]

// errPlan is how to find the error codes of one struct type: field offsets found once by
// reflection, so that a walk is plain memory reads (a 1000-partition OffsetFetch answer is
// walked for every response the request metrics observe).
type errPlan struct {
	typ     reflect.Type
	codes   []uintptr   // offsets of the int16 fields named ErrorCode
	structs []fieldPlan // struct fields that hold codes
	slices  []fieldPlan // slices of structs that hold codes (size: the element's)
	ptrs    []fieldPlan // pointers to structs that hold codes
	empty   bool        // nothing to find
	leaf    bool        // codes only, nothing nested
}

type fieldPlan struct {
	off  uintptr
	size uintptr
	plan *errPlan
}

var plans sync.Map // reflect.Type → *errPlan

func planFor(t reflect.Type) *errPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*errPlan)
	}
	p := buildPlan(t, map[reflect.Type]*errPlan{})
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*errPlan)
}

// buildPlan plans struct type t; seen breaks cycles (kmsg has none today).
func buildPlan(t reflect.Type, seen map[reflect.Type]*errPlan) *errPlan {
	if p, ok := seen[t]; ok {
		return p
	}
	p := &errPlan{typ: t}
	seen[t] = p
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch ft := f.Type; ft.Kind() {
		case reflect.Int16:
			if f.Name == "ErrorCode" {
				p.codes = append(p.codes, f.Offset)
			}
		case reflect.Struct:
			if sub := buildPlan(ft, seen); !sub.empty {
				p.structs = append(p.structs, fieldPlan{off: f.Offset, plan: sub})
			}
		case reflect.Slice:
			if ft.Elem().Kind() == reflect.Struct {
				if sub := buildPlan(ft.Elem(), seen); !sub.empty {
					p.slices = append(p.slices, fieldPlan{off: f.Offset, size: ft.Elem().Size(), plan: sub})
				}
			}
		case reflect.Pointer:
			if ft.Elem().Kind() == reflect.Struct {
				if sub := buildPlan(ft.Elem(), seen); !sub.empty {
					p.ptrs = append(p.ptrs, fieldPlan{off: f.Offset, plan: sub})
				}
			}
		}
	}
	nested := len(p.structs) + len(p.slices) + len(p.ptrs)
	p.empty = len(p.codes) == 0 && nested == 0
	p.leaf = nested == 0
	return p
}

// run gathers equal codes in a row before reporting them.
type run struct {
	fn   func(code int16, n int)
	code int16
	n    int
}

func (r *run) add(code int16) {
	if code != r.code && r.n > 0 {
		r.flush()
	}
	r.code = code
	r.n++
}

func (r *run) flush() {
	if r.n > 0 {
		r.fn(r.code, r.n)
		r.n = 0
	}
}

// walk adds to r the codes of the struct of p's type at v.
func (p *errPlan) walk(v unsafe.Pointer, r *run) {
	for _, off := range p.codes {
		r.add(*(*int16)(unsafe.Add(v, off)))
	}
	for _, f := range p.structs {
		f.plan.walk(unsafe.Add(v, f.off), r)
	}
	for _, f := range p.slices {
		// Every slice header has the same layout: data pointer, length, capacity.
		s := *(*[]byte)(unsafe.Add(v, f.off))
		data := unsafe.Pointer(unsafe.SliceData(s))
		if f.plan.leaf {
			// Only codes in each element (the partitions of most answers): no calls.
			for j := range uintptr(len(s)) {
				e := unsafe.Add(data, j*f.size)
				for _, off := range f.plan.codes {
					if c := *(*int16)(unsafe.Add(e, off)); c == r.code && r.n > 0 {
						r.n++
					} else {
						r.add(c)
					}
				}
			}
			continue
		}
		for j := range uintptr(len(s)) {
			f.plan.walk(unsafe.Add(data, j*f.size), r)
		}
	}
	for _, f := range p.ptrs {
		if e := *(*unsafe.Pointer)(unsafe.Add(v, f.off)); e != nil {
			f.plan.walk(e, r)
		}
	}
}
