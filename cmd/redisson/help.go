package main

import "github.com/urfave/cli/v3"

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
