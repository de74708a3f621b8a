package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

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
		// CMD ARGS --help: urfave/cli takes the first of ARGS for a subcommand whose help is asked
		// for; it is the command's NAME. The command's own help, as CMD --help shows it.
		cmd.CommandNotFound = func(_ context.Context, c *cli.Command, _ string) {
			cli.HelpPrinter(c.Root().Writer, commandHelpTemplate, c)
		}
		if cmd != root && cmd.Action == nil && len(cmd.Commands) > 0 {
			cmd.Action = groupAction
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

// helpCommand is redisson help [COMMAND [SUBCOMMAND]]: the help of the command the path names, as
// COMMAND [SUBCOMMAND] --help prints it (exit 0); a path naming no command is a usage error.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of redisson or of a command",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			root := cmd.Root()
			target, path := root, cmd.Args().Slice()
			for i, name := range path {
				if target = target.Command(name); target == nil {
					parent := strings.Join(append([]string{root.Name}, path[:i]...), " ")
					return &exitError{code: exitUsage, help: parent, err: fmt.Errorf("help: unknown command %q", strings.Join(path[:i+1], " "))}
				}
			}
			if len(path) == 0 {
				return cli.ShowRootCommandHelp(root)
			}
			// The command's own --help, in a fresh run: urfave/cli names a command by the path
			// that ran it.
			out := newApp(root.Writer, root.ErrWriter)
			return out.Run(ctx, append(append([]string{root.Name}, path...), "--help"))
		},
	}
}

// groupAction is the action of a command that only groups subcommands (latch, completion): alone it
// prints its help and exits 64, as the root command does; followed by a word that is none of its
// subcommands, it is a usage error naming it.
func groupAction(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return &exitError{code: exitUsage, help: cmd.FullName(),
			err: fmt.Errorf("%s: unknown command %q", commandName(cmd), cmd.Args().First())}
	}
	_ = cli.ShowSubcommandHelp(cmd)
	return &exitError{code: exitUsage}
}

// flagName matches a long flag named with one dash in the errors of Go's flag parsing, which
// urfave/cli passes on ("for flag -wait", "not defined: -no-such").
var flagName = regexp.MustCompile(`(flag |defined: )-([A-Za-z0-9][A-Za-z0-9_-]+)`)

// longFlagNames writes the long flags in msg as they are given: --wait, not -wait.
func longFlagNames(msg string) string { return flagName.ReplaceAllString(msg, "${1}--${2}") }

// bashCompletionFallback follows urfave/cli's bash completion script: it redefines the script's
// __redisson_init_completion so that, where the bash-completion package is not loaded (neither
// _comp_initialize nor _get_comp_words_by_ref is defined), the words come from bash's own
// COMP_WORDS and COMP_CWORD instead of failing with "_get_comp_words_by_ref: command not found".
const bashCompletionFallback = `
# Without the bash-completion package: bash's own COMP_WORDS and COMP_CWORD.
__redisson_init_completion() {
  # prev is set by bash-completion's functions, but the caller declares no local prev for it.
  local prev
  COMPREPLY=()
  if declare -F _comp_initialize >/dev/null 2>&1; then
    _comp_initialize "$@"
  elif declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    _get_comp_words_by_ref "$@" cur prev words cword
  else
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur="${COMP_WORDS[COMP_CWORD]}"
  fi
}
`

// configureCompletion adjusts urfave/cli's completion command: its bash script is followed by
// bashCompletionFallback, and its usage errors are those of the other commands (usageHints).
func configureCompletion(completion *cli.Command) {
	for _, sub := range completion.Commands {
		if act := sub.Action; sub.Name == "bash" && act != nil {
			sub.Action = func(ctx context.Context, cmd *cli.Command) error {
				if err := act(ctx, cmd); err != nil {
					return err
				}
				_, err := io.WriteString(cmd.Root().Writer, bashCompletionFallback)
				return err
			}
		}
	}
	completion.Action = groupAction
	usageHints(completion)
}
