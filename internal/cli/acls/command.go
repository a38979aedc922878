// Package acls is `muster acls`, Kafka's kafka-acls.sh over the wire (CreateAcls, DescribeAcls,
// DeleteAcls): --add, --remove and --list of ACL bindings on topics, groups, the cluster and
// transactional ids, with the --producer and --consumer conveniences. It works against any
// Kafka-compatible cluster.
package acls

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/security"
)

type options struct {
	clikit.ConnFlags
	add, remove, list bool

	allowPrincipals, denyPrincipals []string
	allowHosts, denyHosts           []string
	principals                      []string // --principal (--list filter)
	operations                      []string

	topics, groups, txnIDs, tokens, userPrincipals []string
	cluster                                        bool
	patternType                                    string

	producer, consumer, idempotent, force bool
}

// NewCommand returns the `acls` command.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := clikit.NewCommand("acls", "Add, remove and list ACLs (kafka-acls.sh)",
		"This tool helps to manage ACLs on Kafka. It mirrors Kafka's kafka-acls.sh (--add, --remove, --list) and "+
			"works against any Kafka-compatible cluster whose listener has an authorizer.")
	f := cmd.Flags()
	o.ConnFlags.AddFlags(f, 30000)
	f.BoolVar(&o.add, "add", false, "Indicates you are trying to add ACLs.")
	f.BoolVar(&o.remove, "remove", false, "Indicates you are trying to remove ACLs.")
	f.BoolVar(&o.list, "list", false, "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource.")
	f.StringArrayVar(&o.topics, "topic", nil, "topic to which ACLs should be added or removed. A value of '*' indicates ACL should apply to all topics.")
	f.StringArrayVar(&o.groups, "group", nil, "Consumer Group to which the ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all groups.")
	f.BoolVar(&o.cluster, "cluster", false, "Add/Remove cluster ACLs.")
	f.StringArrayVar(&o.txnIDs, "transactional-id", nil, "The transactionalId to which ACLs should be added or removed. A value of '*' indicates the ACLs should apply to all transactionalIds.")
	f.StringArrayVar(&o.tokens, "delegation-token", nil, "Delegation token to which ACLs should be added or removed.")
	f.StringArrayVar(&o.userPrincipals, "user-principal", nil, "Specifies a user principal as a resource in relation with the operation.")
	f.StringVar(&o.patternType, "resource-pattern-type", "", "The type of the resource pattern or pattern filter: literal or prefixed when adding; also any or match when listing or removing (default literal; any for --list).")
	f.StringArrayVar(&o.allowPrincipals, "allow-principal", nil, "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used.")
	f.StringArrayVar(&o.denyPrincipals, "deny-principal", nil, "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access.")
	f.StringArrayVar(&o.principals, "principal", nil, "List ACLs for the specified principal. principal is in principalType:name format. Multiple --principal option can be passed.")
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "Host from which principals listed in --allow-principal will have access. If you have specified --allow-principal then the default for this option will be set to '*'.")
	f.StringArrayVar(&o.denyHosts, "deny-host", nil, "Host from which principals listed in --deny-principal will be denied access. If you have specified --deny-principal then the default for this option will be set to '*'.")
	f.StringArrayVar(&o.operations, "operation", nil, "Operation that is being allowed or denied: All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (default All).")
	f.BoolVar(&o.producer, "producer", false, "Convenience option to add/remove ACLs for producer role: WRITE, DESCRIBE and CREATE on the topic(s).")
	f.BoolVar(&o.consumer, "consumer", false, "Convenience option to add/remove ACLs for consumer role: READ and DESCRIBE on the topic(s) and READ on the group (needs --group).")
	f.BoolVar(&o.idempotent, "idempotent", false, "Enable idempotence for the producer (IDEMPOTENT_WRITE on the cluster); with --producer.")
	f.BoolVar(&o.force, "force", false, "Assume Yes to all queries and do not prompt.")
	clikit.Wire(cmd, "", func(err error) string { return err.Error() }, func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return clikit.Usagef("unexpected arguments: %s", strings.Join(args, " "))
		}
		if err := o.validate(); err != nil {
			return err
		}
		return run(c.Context(), c, o)
	})
	return cmd
}

func (o *options) validate() error {
	n := 0
	for _, b := range []bool{o.add, o.remove, o.list} {
		if b {
			n++
		}
	}
	if n != 1 {
		return clikit.Usagef("Command must include exactly one action: --list, --add, --remove.")
	}
	if o.Bootstrap == "" {
		return clikit.Usagef("Missing required argument \"[bootstrap-server]\"")
	}
	if (o.producer || o.consumer) && !o.add && !o.remove {
		return clikit.Usagef("--producer and --consumer are only valid with --add or --remove.")
	}
	if o.producer && len(o.topics) == 0 {
		return clikit.Usagef("With --producer you must specify a --topic")
	}
	if o.consumer && (len(o.topics) == 0 || len(o.groups) == 0) {
		return clikit.Usagef("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	if o.idempotent && !o.producer {
		return clikit.Usagef("The --idempotent option is only available if --producer is set")
	}
	if (o.add || o.remove) && !o.producer && !o.consumer && len(o.allowPrincipals)+len(o.denyPrincipals) == 0 && o.add {
		return clikit.Usagef("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
	}
	if o.add && len(o.resources(false)) == 0 {
		return clikit.Usagef("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	switch strings.ToLower(o.patternType) {
	case "", "literal", "prefixed":
	case "any", "match":
		if o.add {
			return clikit.Usagef("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", o.patternType)
		}
	default:
		return clikit.Usagef("Invalid --resource-pattern-type '%s' (literal, prefixed, any, match)", o.patternType)
	}
	return nil
}

// resource is one resource pattern named on the command line.
type resource struct {
	typ  security.ResourceType
	name string
}

func (o *options) resources(producerConsumerOnly bool) []resource {
	var out []resource
	for _, t := range o.topics {
		out = append(out, resource{security.Topic, t})
	}
	for _, g := range o.groups {
		out = append(out, resource{security.Group, g})
	}
	if o.cluster {
		out = append(out, resource{security.Cluster, security.ClusterName})
	}
	for _, t := range o.txnIDs {
		out = append(out, resource{security.TransactionalID, t})
	}
	for _, t := range o.tokens {
		out = append(out, resource{security.DelegationToken, t})
	}
	for _, u := range o.userPrincipals {
		out = append(out, resource{security.UserResource, u})
	}
	return out
}

func (o *options) pattern(list bool) kmsg.ACLResourcePatternType {
	switch strings.ToLower(o.patternType) {
	case "prefixed":
		return security.Prefixed
	case "any":
		return kmsg.ACLResourcePatternTypeAny
	case "match":
		return kmsg.ACLResourcePatternTypeMatch
	case "literal":
		return security.Literal
	}
	if list {
		return kmsg.ACLResourcePatternTypeAny
	}
	return security.Literal
}

func run(ctx context.Context, c *cobra.Command, o *options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	adm, err := clikit.NewAdmin(o.ConnFlags, "muster-acls", c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer adm.Close()
	out := c.OutOrStdout()
	switch {
	case o.list:
		return o.runList(ctx, adm, out)
	case o.add:
		return o.runAdd(ctx, adm, out)
	default:
		return o.runRemove(ctx, adm, out, c.InOrStdin())
	}
}

// bindingsToAdd expands the flags into bindings per resource (getAcls / getProducerResourceFilterToAcls
// in Kafka's AclCommand).
func (o *options) bindingsToAdd() (map[resource][]security.Binding, []resource, error) {
	ops, err := parseOperations(o.operations)
	if err != nil {
		return nil, nil, err
	}
	byRes := map[resource][]security.Binding{}
	var order []resource
	addFor := func(r resource, ops []security.Operation) {
		if _, ok := byRes[r]; !ok {
			order = append(order, r)
		}
		for _, op := range ops {
			for _, e := range []struct {
				principals, hosts []string
				perm              security.Permission
			}{{o.allowPrincipals, hostsOr(o.allowHosts), security.Allow}, {o.denyPrincipals, hostsOr(o.denyHosts), security.Deny}} {
				for _, p := range e.principals {
					for _, h := range e.hosts {
						byRes[r] = append(byRes[r], security.Binding{ResourceType: r.typ, ResourceName: r.name, PatternType: o.pattern(false),
							Principal: p, Host: h, Operation: op, Permission: e.perm})
					}
				}
			}
		}
	}
	if o.producer || o.consumer {
		for _, t := range o.topics {
			r := resource{security.Topic, t}
			if o.producer {
				addFor(r, []security.Operation{security.OpWrite, security.OpDescribe, security.OpCreate})
			}
			if o.consumer {
				addFor(r, []security.Operation{security.OpRead, security.OpDescribe})
			}
		}
		if o.consumer {
			for _, g := range o.groups {
				addFor(resource{security.Group, g}, []security.Operation{security.OpRead})
			}
		}
		if o.producer {
			for _, t := range o.txnIDs {
				addFor(resource{security.TransactionalID, t}, []security.Operation{security.OpWrite, security.OpDescribe})
			}
			if o.idempotent {
				addFor(resource{security.Cluster, security.ClusterName}, []security.Operation{security.OpIdempotentWrite})
			}
		}
		return byRes, order, nil
	}
	for _, r := range o.resources(false) {
		addFor(r, ops)
	}
	return byRes, order, nil
}

func hostsOr(h []string) []string {
	if len(h) == 0 {
		return []string{"*"}
	}
	return h
}

func confirm(in io.Reader, out io.Writer, msg string) bool {
	fmt.Fprint(out, msg+" (y/n)\n")
	line, _ := bufio.NewReader(in).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y")
}
