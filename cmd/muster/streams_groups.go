package main

import "github.com/muster-io/muster/internal/cli/streamsgroups"

func init() { extraCommands = append(extraCommands, streamsgroups.NewCommand) }
