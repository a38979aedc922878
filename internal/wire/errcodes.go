package wire

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorCodes calls fn for every error code a response carries (every int16 field named
// ErrorCode, at the top level and in nested structs and slices, e.g. each partition of an
// OffsetCommit response), NONE (0) included: Kafka's AbstractResponse.errorCounts, which its
// RequestMetrics ErrorsPerSec counts. The walk of each response type is planned once (by
// reflection) and cached.
func ErrorCodes(resp kmsg.Response, fn func(code int16)) {
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
		p.walk(v.Elem(), fn)
	}
}

// plansByKey caches the plan of each key's response type (the sync.Map is the slow path).
var plansByKey [128]atomic.Pointer[errPlan]

// errPlan is how to find the error codes of one struct type.
type errPlan struct {
	typ     reflect.Type
	codes   []int       // int16 fields named ErrorCode
	structs []fieldPlan // struct fields that hold codes
	slices  []fieldPlan // slices of structs that hold codes
	ptrs    []fieldPlan // pointers to structs that hold codes
	empty   bool        // nothing to find
}

type fieldPlan struct {
	index int
	plan  *errPlan
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
				p.codes = append(p.codes, i)
			}
		case reflect.Struct:
			if sub := buildPlan(ft, seen); !sub.empty {
				p.structs = append(p.structs, fieldPlan{i, sub})
			}
		case reflect.Slice:
			if ft.Elem().Kind() == reflect.Struct {
				if sub := buildPlan(ft.Elem(), seen); !sub.empty {
					p.slices = append(p.slices, fieldPlan{i, sub})
				}
			}
		case reflect.Pointer:
			if ft.Elem().Kind() == reflect.Struct {
				if sub := buildPlan(ft.Elem(), seen); !sub.empty {
					p.ptrs = append(p.ptrs, fieldPlan{i, sub})
				}
			}
		}
	}
	p.empty = len(p.codes) == 0 && len(p.structs) == 0 && len(p.slices) == 0 && len(p.ptrs) == 0
	return p
}

func (p *errPlan) walk(v reflect.Value, fn func(int16)) {
	for _, i := range p.codes {
		fn(int16(v.Field(i).Int()))
	}
	for _, f := range p.structs {
		f.plan.walk(v.Field(f.index), fn)
	}
	for _, f := range p.slices {
		s := v.Field(f.index)
		for j, n := 0, s.Len(); j < n; j++ {
			f.plan.walk(s.Index(j), fn)
		}
	}
	for _, f := range p.ptrs {
		if e := v.Field(f.index); !e.IsNil() {
			f.plan.walk(e.Elem(), fn)
		}
	}
}
