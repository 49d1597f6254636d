"""rpcscope's man pages and shell completions, generated from the binaries' --help.

packaging/gen_docs.py is the command that runs it; the modules, in the order the data flows:
  helptext  run the binaries, split a help text into blocks (usage, paragraphs, lists, ...)
  model     what the blocks say: commands, options, arguments and how each value is completed
  manpage   the roff man pages
  bash      the bash completion scripts
  zsh       the zsh completion functions
  common    the generator's name for headers, its error type, shell quoting
"""
