package adminapi

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/security"
)

// DescribeUserSCRAMCredentials serves DescribeUserScramCredentials v0: CLUSTER DESCRIBE, then the
// mechanisms and iteration counts of the named users (every user when none is named); never a
// salt or a key. A user named twice gets DUPLICATE_RESOURCE, one without credentials
// RESOURCE_NOT_FOUND.
func (h *Handlers) DescribeUserSCRAMCredentials(c security.Check, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !c.Cluster(security.OpDescribe) {
		resp.ErrorCode, resp.ErrorMessage = errMsg(kerr.ClusterAuthorizationFailed, "")
		for _, u := range req.Users {
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.User = u.Name
			r.ErrorCode, r.ErrorMessage = errMsg(kerr.ClusterAuthorizationFailed, "")
			resp.Results = append(resp.Results, r)
		}
		return resp
	}
	count := map[string]int{}
	var users []string
	for _, u := range req.Users {
		if count[u.Name] == 0 {
			users = append(users, u.Name)
		}
		count[u.Name]++
	}
	var lookup []string
	for _, u := range users {
		if count[u] == 1 {
			lookup = append(lookup, u)
		}
	}
	if len(req.Users) > 0 && len(lookup) == 0 {
		lookup = []string{"\x00none"} // every named user is a duplicate: describe none
	}
	found, _ := h.Scram.Describe(lookup)
	if len(req.Users) == 0 {
		for u := range found {
			users = append(users, u)
		}
		sort.Strings(users)
	}
	for _, u := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = u
		switch infos, ok := found[u]; {
		case count[u] > 1:
			r.ErrorCode, r.ErrorMessage = errMsg(kerr.DuplicateResource, "Cannot describe SCRAM credentials for the same user twice in a single request: "+u)
		case !ok:
			r.ErrorCode, r.ErrorMessage = errMsg(kerr.ResourceNotFound, "Attempt to describe a user credential that does not exist: "+u)
		default:
			for _, in := range infos {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = int8(in.Mechanism), in.Iterations
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

// AlterUserSCRAMCredentials serves AlterUserScramCredentials v0: CLUSTER ALTER (else
// CLUSTER_AUTHORIZATION_FAILED for every user), then ScramCredentials.Alter's per-user results.
func (h *Handlers) AlterUserSCRAMCredentials(c security.Check, req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	failAll := func(e *kerr.Error, msg string) *kmsg.AlterUserSCRAMCredentialsResponse {
		for _, u := range alteredUsers(req) {
			r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			r.User = u
			r.ErrorCode, r.ErrorMessage = errMsg(e, msg)
			resp.Results = append(resp.Results, r)
		}
		return resp
	}
	if !c.Cluster(security.OpAlter) {
		return failAll(kerr.ClusterAuthorizationFailed, "")
	}
	var dels []security.ScramDeletion
	for _, d := range req.Deletions {
		dels = append(dels, security.ScramDeletion{User: d.Name, Mechanism: security.ScramMechanism(d.Mechanism)})
	}
	var ups []security.ScramUpsertion
	for _, u := range req.Upsertions {
		ups = append(ups, security.ScramUpsertion{User: u.Name, Mechanism: security.ScramMechanism(u.Mechanism),
			Iterations: u.Iterations, Salt: u.Salt, SaltedPassword: u.SaltedPassword})
	}
	results, err := h.Scram.Alter(dels, ups)
	if err != nil {
		return failAll(kerr.UnknownServerError, err.Error())
	}
	for _, res := range results {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = res.User
		if res.Err != nil {
			r.ErrorCode, r.ErrorMessage = res.Err.Code, str(res.Message)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

// alteredUsers are the distinct users an AlterUserScramCredentials request names, sorted.
func alteredUsers(req *kmsg.AlterUserSCRAMCredentialsRequest) []string {
	seen := map[string]bool{}
	var users []string
	add := func(u string) {
		if !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	for _, d := range req.Deletions {
		add(d.Name)
	}
	for _, u := range req.Upsertions {
		add(u.Name)
	}
	sort.Strings(users)
	return users
}
