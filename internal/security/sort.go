package security

import (
	"cmp"
	"slices"
)

// sortBindings orders bindings by resource (type, pattern, name), then principal, host,
// operation and permission, so listings are stable.
func sortBindings(bs []Binding) {
	slices.SortFunc(bs, func(x, y Binding) int {
		return cmp.Or(
			cmp.Compare(x.ResourceType, y.ResourceType),
			cmp.Compare(x.PatternType, y.PatternType),
			cmp.Compare(x.ResourceName, y.ResourceName),
			cmp.Compare(x.Principal, y.Principal),
			cmp.Compare(x.Host, y.Host),
			cmp.Compare(x.Operation, y.Operation),
			cmp.Compare(x.Permission, y.Permission),
		)
	})
}
