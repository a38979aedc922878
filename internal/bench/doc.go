// Package bench is muster's benchmark suite (muster-bench): it drives a muster broker and a
// kfake broker (franz-go's in-memory fake Kafka, run as its own process) with the same raw Kafka
// requests over loopback and reports throughput and latency side by side, with ratios to kfake
// and to the machine's limits (ApiVersions round trip, raw write+fsync rate of the data dir's
// filesystem).
//
// Every workload is closed-loop: each connection sends one request, waits for the response and
// sends the next, until the duration or the request budget is used up. Latency is measured per
// request on the client. The load generator (Options.Client) is by default ClientRaw: one TCP
// connection driven synchronously by one goroutine, requests framed with kmsg (rawconn.go), so
// the generator takes little CPU from the broker under test; ClientKgo (one franz-go client per
// connection) is kept for comparison. produce/consume always use franz-go clients.
//
// The join storms (cg-join-storm, classic-join-storm) time a storm of joins until the group has
// settled: Stable by ConsumerGroupDescribe / DescribeGroups, every member at the group epoch
// (which is the assignment epoch), a balanced split, every partition owned once (settle.go);
// shard-load measures muster's memory per committed offset, member and empty group and
// its restart (replay) time.
//
// kfake keeps all state in memory and never fsyncs; muster acknowledges a commit only after its
// record is durable (fsync). Ratios to kfake therefore compare a durable broker with an
// in-memory one.
package bench
