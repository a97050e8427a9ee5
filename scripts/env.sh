# Give this shell what `make` has, so `cdktf synth|deploy|diff|destroy` and `python -m tools.*` by hand behave as
# under make:   source scripts/env.sh      (bash or zsh; from any directory; again after `make synth` on a fresh clone)
#
# The variables and why: scripts/env.py. The Makefile's recipes source this same file (through BASH_ENV), so the
# two cannot drift. Sourced when output goes to no terminal (CI, a log), it also sets CI=true: no spinner frames.

# Under make (BASH_ENV), once per recipe line, first: the recipe's children (a pyenv shim is a bash script, say)
# inherit the variables, not this hook.
case "${BASH_ENV:-}" in */scripts/env.sh) unset BASH_ENV ;; esac
if [ -n "${BASH_VERSION:-}" ]; then
  _eks_bg_root=$(builtin cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
elif [ -n "${ZSH_VERSION:-}" ]; then
  _eks_bg_root=$(builtin cd -- "$(dirname -- "${(%):-%x}")/.." && pwd -P)
else
  _eks_bg_root=$(pwd)  # another shell cannot say where this file is: run it from the project's directory
fi
if [ -t 1 ]; then _eks_bg_terminal=--terminal; else _eks_bg_terminal=; fi
# -B: this first Python run comes before the bytecode cache is set (scripts/env.py): it writes no __pycache__ beside
# the sources of a checkout.
if _eks_bg_exports=$(builtin cd -- "$_eks_bg_root" && python3 -B -m scripts.env --path "$PATH" $_eks_bg_terminal); then
  eval "$_eks_bg_exports"
else
  echo "scripts/env.sh: python3 -m scripts.env failed in $_eks_bg_root (is this the project's scripts/env.sh?)" >&2
fi
unset _eks_bg_root _eks_bg_terminal _eks_bg_exports
