package acls

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/security"
)

// operationNames maps kafka-acls.sh operation names (any case, with or without underscores) to
// operations.
var operationNames = map[string]security.Operation{
	"all": security.OpAll, "read": security.OpRead, "write": security.OpWrite, "create": security.OpCreate,
	"delete": security.OpDelete, "alter": security.OpAlter, "describe": security.OpDescribe,
	"clusteraction": security.OpClusterAction, "describeconfigs": security.OpDescribeConfigs,
	"alterconfigs": security.OpAlterConfigs, "idempotentwrite": security.OpIdempotentWrite,
	"createtokens": security.OpCreateTokens, "describetokens": security.OpDescribeTokens,
}

func parseOperations(names []string) ([]security.Operation, error) {
	if len(names) == 0 {
		return []security.Operation{security.OpAll}, nil
	}
	var out []security.Operation
	for _, n := range names {
		op, ok := operationNames[strings.ToLower(strings.ReplaceAll(n, "_", ""))]
		if !ok {
			return nil, clikit.Usagef("Invalid operation '%s' (All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens)", n)
		}
		out = append(out, op)
	}
	return out, nil
}

func patternText(t kmsg.ACLResourcePatternType) string { return strings.ToUpper(t.String()) }
func typeText(t kmsg.ACLResourceType) string           { return strings.ToUpper(t.String()) }

func resourceText(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType) string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", typeText(rt), name, patternText(pt))
}

func entryText(principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s)", principal, host,
		strings.ToUpper(op.String()), strings.ToUpper(perm.String()))
}

func (o *options) runAdd(ctx context.Context, adm *clikit.Admin, out io.Writer) error {
	byRes, order, err := o.bindingsToAdd()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, r := range order {
		bs := byRes[r]
		if len(bs) == 0 {
			continue
		}
		fmt.Fprintf(out, "Adding ACLs for resource `%s`: \n", resourceText(r.typ, r.name, o.pattern(false)))
		for _, b := range bs {
			fmt.Fprintf(out, " \t%s \n", entryText(b.Principal, b.Host, b.Operation, b.Permission))
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = b.ResourceType, b.ResourceName, b.PatternType
			c.Principal, c.Host, c.Operation, c.PermissionType = b.Principal, b.Host, b.Operation, b.Permission
			req.Creations = append(req.Creations, c)
		}
		fmt.Fprintln(out)
	}
	cctx, cancel := adm.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, adm.Kcl)
	if err != nil {
		return err
	}
	for i, r := range resp.Results {
		if e := kerr.ErrorForCode(r.ErrorCode); e != nil {
			msg := e.Error()
			if r.ErrorMessage != nil {
				msg += ": " + *r.ErrorMessage
			}
			c := req.Creations[i]
			return fmt.Errorf("adding ACL %s on %s: %s", entryText(c.Principal, c.Host, c.Operation, c.PermissionType),
				resourceText(c.ResourceType, c.ResourceName, c.ResourcePatternType), msg)
		}
	}
	for _, r := range order {
		if err := o.listResource(ctx, adm, out, r, o.pattern(false)); err != nil {
			return err
		}
	}
	return nil
}

// filters are the DescribeAcls/DeleteAcls filters the flags name: per resource (or every
// resource when none is named), per --principal.
func (o *options) filters(list bool) []kmsg.DeleteACLsRequestFilter {
	res := o.resources(false)
	pt := o.pattern(list)
	var fs []kmsg.DeleteACLsRequestFilter
	mk := func(rt kmsg.ACLResourceType, name *string) kmsg.DeleteACLsRequestFilter {
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = rt, name, pt
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		return f
	}
	if len(res) == 0 {
		fs = append(fs, mk(kmsg.ACLResourceTypeAny, nil))
	}
	for _, r := range res {
		n := r.name
		fs = append(fs, mk(r.typ, &n))
	}
	principals := o.principals
	if !list {
		principals = append(append([]string{}, o.allowPrincipals...), o.denyPrincipals...)
	}
	if len(principals) == 0 {
		return fs
	}
	var out []kmsg.DeleteACLsRequestFilter
	for _, f := range fs {
		for _, p := range principals {
			g := f
			g.Principal = &p
			out = append(out, g)
		}
	}
	return out
}

func (o *options) runList(ctx context.Context, adm *clikit.Admin, out io.Writer) error {
	type key struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
	}
	grouped := map[key][]string{}
	var keys []key
	for _, f := range o.filters(true) {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourceName, req.ResourcePatternType = f.ResourceType, f.ResourceName, f.ResourcePatternType
		req.Principal, req.Operation, req.PermissionType = f.Principal, f.Operation, f.PermissionType
		cctx, cancel := adm.Ctx(ctx)
		resp, err := req.RequestWith(cctx, adm.Kcl)
		cancel()
		if err != nil {
			return err
		}
		if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
			return describeErr(e, resp.ErrorMessage)
		}
		for _, r := range resp.Resources {
			k := key{r.ResourceType, r.ResourceName, r.ResourcePatternType}
			if _, ok := grouped[k]; !ok {
				keys = append(keys, k)
			}
			for _, a := range r.ACLs {
				grouped[k] = append(grouped[k], entryText(a.Principal, a.Host, a.Operation, a.PermissionType))
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.rt != b.rt {
			return a.rt < b.rt
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.pt < b.pt
	})
	for _, k := range keys {
		if len(o.principals) > 0 {
			fmt.Fprintf(out, "ACLs for principal `%s`\n", strings.Join(o.principals, ", "))
		}
		fmt.Fprintf(out, "Current ACLs for resource `%s`: \n", resourceText(k.rt, k.name, k.pt))
		for _, e := range grouped[k] {
			fmt.Fprintf(out, " \t%s \n", e)
		}
		fmt.Fprintln(out)
	}
	return nil
}

func (o *options) listResource(ctx context.Context, adm *clikit.Admin, out io.Writer, r resource, pt kmsg.ACLResourcePatternType) error {
	req := kmsg.NewPtrDescribeACLsRequest()
	name := r.name
	req.ResourceType, req.ResourceName, req.ResourcePatternType = r.typ, &name, pt
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	cctx, cancel := adm.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, adm.Kcl)
	if err != nil {
		return err
	}
	if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
		return describeErr(e, resp.ErrorMessage)
	}
	fmt.Fprintf(out, "Current ACLs for resource `%s`: \n", resourceText(r.typ, r.name, pt))
	for _, res := range resp.Resources {
		for _, a := range res.ACLs {
			fmt.Fprintf(out, " \t%s \n", entryText(a.Principal, a.Host, a.Operation, a.PermissionType))
		}
	}
	fmt.Fprintln(out)
	return nil
}

func (o *options) runRemove(ctx context.Context, adm *clikit.Admin, out io.Writer, in io.Reader) error {
	req := kmsg.NewPtrDeleteACLsRequest()
	if o.producer || o.consumer || len(o.operations) > 0 {
		// Exact bindings: the ones --add would create.
		byRes, order, err := o.bindingsToAdd()
		if err != nil {
			return err
		}
		for _, r := range order {
			for _, b := range byRes[r] {
				f := kmsg.NewDeleteACLsRequestFilter()
				name, p, h := b.ResourceName, b.Principal, b.Host
				f.ResourceType, f.ResourceName, f.ResourcePatternType = b.ResourceType, &name, b.PatternType
				f.Principal, f.Host, f.Operation, f.PermissionType = &p, &h, b.Operation, b.Permission
				req.Filters = append(req.Filters, f)
			}
		}
	} else {
		req.Filters = o.filters(false)
	}
	if !o.force && !confirm(in, out, "Are you sure you want to remove ACLs matching the given options?") {
		return nil
	}
	cctx, cancel := adm.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, adm.Kcl)
	if err != nil {
		return err
	}
	removed := 0
	for _, r := range resp.Results {
		if e := kerr.ErrorForCode(r.ErrorCode); e != nil {
			return describeErr(e, r.ErrorMessage)
		}
		for _, m := range r.MatchingACLs {
			removed++
			fmt.Fprintf(out, "Removed ACL %s on `%s`\n", entryText(m.Principal, m.Host, m.Operation, m.PermissionType),
				resourceText(m.ResourceType, m.ResourceName, m.ResourcePatternType))
		}
	}
	if removed == 0 {
		fmt.Fprintln(out, "No ACLs matched.")
	}
	return nil
}

func describeErr(e error, msg *string) error {
	if msg != nil && *msg != "" {
		return fmt.Errorf("%v: %s", e, *msg)
	}
	return e
}
