package config

import "regexp"

// observeDefs are muster's keys for what operators see of their groups: rebalance history, lag
// monitoring and the web console.
var observeDefs = []Def{
	{Name: "muster.rebalance.history.max.events", Kind: Int, Default: "100", Min: i64(0), Max: i64(10000),
		Doc: "muster: rebalance history events kept per group (the last N group epoch bumps with their causes, durable); 0 = no history"},
	{Name: "muster.rebalance.log.interval.ms", Kind: Long, Default: "10000", Min: i64(0),
		Doc: "muster: at most one INFO line per group per interval for group epoch bumps (the rest are counted in the next line); 0 = every bump"},
	{Name: "muster.lag.enable", Kind: Bool, Default: "true",
		Doc: "muster: lag monitoring (commit windows, Burrow's statuses, lag metrics, /api/v1/groups/{g}/lag)"},
	{Name: "muster.lag.sample.interval.ms", Kind: Long, Default: "10000", Min: i64(10),
		Doc: "muster: how often every group's committed offsets and log ends are sampled and evaluated"},
	{Name: "muster.lag.window.commits", Kind: Int, Default: "10", Min: i64(2), Max: i64(1000),
		Doc: "muster: commits per partition in the evaluation window (Burrow's intervals)"},
	{Name: "muster.lag.min.distance.ms", Kind: Long, Default: "1000", Min: i64(0),
		Doc: "muster: a commit closer than this to a partition's newest one replaces it in the window (Burrow's min-distance)"},
	{Name: "muster.lag.partition.metrics.groups", Kind: String, Default: "",
		Doc: "muster: regular expression of the groups whose per-partition lag series are exported (full match; empty = none); per-group series are always exported",
		Check: func(v string) string {
			if _, err := regexp.Compile(v); err != nil {
				return "not a regular expression: " + err.Error()
			}
			return ""
		}},
	{Name: "muster.console.enable", Kind: Bool, Default: "true",
		Doc: "muster: the web console (/ui) and its JSON API (/api/v1) on the HTTP listener"},
}
