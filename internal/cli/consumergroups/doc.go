// Package consumergroups implements `muster consumer-groups`, an admin tool
// that mirrors Apache Kafka's kafka-consumer-groups.sh (ConsumerGroupCommand)
// and works against any Kafka-compatible cluster through --bootstrap-server.
//
// Exactly one action is required: --list, --describe, --delete,
// --delete-offsets or --reset-offsets. Text output follows Kafka's column
// layouts (printf widths, "-" for missing values) with two deliberate
// presentation differences: no leading blank line before a table and no
// trailing blanks at the end of a line. Errors and warnings go to stderr,
// tables and data to stdout. `--output json` emits one stable JSON document
// per invocation on stdout (the shapes are the *JSON types next to each action).
//
// Group descriptions use ConsumerGroupDescribe (KIP-848) first and fall back
// to the classic DescribeGroups for groups the broker reports as not being
// consumer-protocol groups (or when the API is unsupported). Committed offsets
// are read with OffsetFetch, so describing an Empty group never joins it as a
// dummy member (seed 001).
//
// Exit codes: the command returns nil on success and an *ExitError carrying
// the process exit code (1) on any failure. By the time RunE returns, the
// command has already written every user-facing message to its stderr
// (cmd.ErrOrStderr()); it sets SilenceErrors and SilenceUsage so cobra prints
// nothing more. The root command should therefore map errors like this:
//
//	if err := root.Execute(); err != nil {
//		var ee *clikit.ExitError
//		if errors.As(err, &ee) {
//			os.Exit(ee.Code) // message already printed
//		}
//		fmt.Fprintln(os.Stderr, "Error:", err)
//		os.Exit(1)
//	}
package consumergroups
