package txnapi

// TxnShard implements api.TxnShards: the shard of a transactional id and whether this node
// serves it (in cluster mode the shards are leased to the nodes; on one node always true).
func (s *Service) TxnShard(id string) (int32, bool) {
	shard := s.shardFor(id)
	return shard, s.RT.Owned(shard)
}
