package endpoints

import (
	"github.com/opennomad/nomad/structs"
)

// ACL objects every region shares (policies, roles, auth methods, binding
// rules, global tokens, and the bootstrap that makes the first global
// token) are written in the authoritative region only: a write of one
// made elsewhere is pointed there before it is forwarded, and the other
// regions' leaders copy the result (package aclreplication). Local tokens
// stay in the region that made them. With no authoritative region
// configured every write is local, as in a single region.

// toAuthoritative points a shared object's write at the authoritative
// region.
func (a *ACL) toAuthoritative(w *structs.WriteRequest) {
	w.Region = a.srv.Settings().AuthoritativeRegion
}

// routeTokenUpsert points a write of global tokens at the authoritative
// region; a request mixing global and local tokens is refused, as it
// would have to be written in two places.
func (a *ACL) routeTokenUpsert(args *structs.ACLTokenUpsertRequest) error {
	return a.routeTokens(&args.WriteRequest, "upsert", args.Tokens)
}

// routeTokenDelete points the deletion of global tokens (as this region's
// copy knows them) at the authoritative region; mixing global and local
// tokens is refused. Tokens this region does not have are left for the
// region the request is served in to report.
func (a *ACL) routeTokenDelete(args *structs.ACLTokenDeleteRequest) error {
	tokens := make([]*structs.ACLToken, 0, len(args.AccessorIDs))
	for _, id := range args.AccessorIDs {
		tok, err := a.srv.State().ACLTokenByAccessorID(nil, id)
		if err != nil {
			return err
		}
		tokens = append(tokens, tok)
	}
	return a.routeTokens(&args.WriteRequest, "delete", tokens)
}

// routeTokens points w at the authoritative region when tokens are
// global, refusing (as verb) a mix of global and local ones; nil tokens
// count as neither.
func (a *ACL) routeTokens(w *structs.WriteRequest, verb string, tokens []*structs.ACLToken) error {
	global, local := 0, 0
	for _, t := range tokens {
		switch {
		case t == nil:
		case t.Global:
			global++
		default:
			local++
		}
	}
	if global > 0 && local > 0 {
		return structs.KindErrorf(structs.ErrInvalid, "cannot %s mixed global and non-global tokens", verb)
	}
	if global > 0 {
		a.toAuthoritative(w)
	}
	return nil
}
