package main

import (
	"context"
	"errors"
	"regexp"

	"github.com/urfave/cli/v3"
)

// globalHelpLine ends every subcommand's help: the connection flags and the exit codes are in the
// root help only, not repeated in each command's.
const globalHelpLine = "Global options (connection) and exit codes: redisson --help"

// commandHelpTemplate is urfave/cli's help of a command (CommandHelpTemplate and
// SubcommandHelpTemplate in one: a command with subcommands lists them) without the GLOBAL OPTIONS
// section, which globalHelpLine replaces.
const commandHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Category}}

CATEGORY:
   {{.Category}}{{end}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}{{if .VisibleCommands}}

COMMANDS:{{template "visibleCommandTemplate" .}}{{end}}{{if .VisibleFlagCategories}}

OPTIONS:{{template "visibleFlagCategoryTemplate" .}}{{else if .VisibleFlags}}

OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}

` + globalHelpLine + `
`

// The subcommands' help is commandHelpTemplate: these are urfave/cli's documented hooks for a
// program's own help text (a command's CustomHelpTemplate is not used for a command that has
// subcommands, such as latch).
func init() {
	cli.CommandHelpTemplate = commandHelpTemplate
	cli.SubcommandHelpTemplate = commandHelpTemplate
}

// usageHints makes the usage errors of root and of its subcommands exit 64 with one line of error
// and one pointing at the failing command's help (printed by run), as git and kubectl do, instead
// of urfave/cli's whole help followed by the error: a flag that does not parse, a required flag
// missing (OnUsageError, which urfave/cli does not pass down to subcommands), and the usage errors
// the commands' actions return.
func usageHints(root *cli.Command) {
	_ = root.Walk(func(cmd *cli.Command) error {
		cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
			return &exitError{code: exitUsage, err: errors.New(longFlagNames(err.Error())), help: c.FullName()}
		}
		if act := cmd.Action; act != nil {
			cmd.Action = func(ctx context.Context, c *cli.Command) error {
				err := act(ctx, c)
				var ee *exitError
				if errors.As(err, &ee) && ee.code == exitUsage && ee.help == "" {
					ee.help = c.FullName()
				}
				return err
			}
		}
		return nil
	})
}

// flagName matches a long flag named with one dash in the errors of Go's flag parsing, which
// urfave/cli passes on ("for flag -wait", "not defined: -no-such").
var flagName = regexp.MustCompile(`(flag |defined: )-([A-Za-z0-9][A-Za-z0-9_-]+)`)

// longFlagNames writes the long flags in msg as they are given: --wait, not -wait.
func longFlagNames(msg string) string { return flagName.ReplaceAllString(msg, "${1}--${2}") }
