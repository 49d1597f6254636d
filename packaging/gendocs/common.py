"""What the parts of the generator share: its name for the headers, its error, and for the shell
scripts quoting and templates."""

import re

# The generator as the generated files name it.
GENERATOR = "packaging/gen_docs.py"


class GenError(Exception):
    """A failure to report to the user (then exit non-zero)."""


def sh_quote(s):
    """S as one single-quoted shell word (bash and zsh)."""
    return "'" + s.replace("'", "'\\''") + "'"


def method_lister_holes(lister):
    """The holes of the templates that complete a method (bash.BASH_METHODS, zsh.ZSH_METHODS)
    that come from LISTER, a model.MethodLister."""
    return {"LISTER": lister.command,
            "FLAGS": "|".join(lister.flags),
            "FLAGS_EQ": "|".join(flag + "=*" for flag in lister.flags),
            "FLAGS_TEXT": ", ".join(lister.flags),
            "SCHEMA_FLAGS": "|".join(lister.schema_flags),
            "SCHEMA_TEXT": " or ".join(lister.schema_flags)}


def fill(template, **holes):
    """TEMPLATE, a piece of shell script, as a list of lines with every @NAME@ replaced by
    holes[NAME] (which may span lines).  A line that is only a hole whose text is empty is left
    out; so are blank lines at the start and the end."""
    out = []
    for line in template.strip("\n").split("\n"):
        alone = re.fullmatch(r"\s*@([A-Z_]+)@\s*", line)
        if alone and holes[alone.group(1)] == "":
            continue
        line = re.sub(r"@([A-Z_]+)@", lambda m: holes[m.group(1)], line)
        out.extend(line.split("\n"))
    return out
