/* venv.h - the Python virtual environments of a workspace and the
 * interpreters they were made from. A virtual environment (`uv venv`,
 * `python3 -m venv`, Poetry's and PDM's in-project `.venv`, tox's and nox's
 * environments) runs its base interpreter, named by `home` in its
 * pyvenv.cfg: one that uv, pyenv or conda installed in the home is hidden
 * inside, and `.venv/bin/python` (or `python` after `activate`) is "not
 * found". discover.c exposes those interpreters' installs read-only.
 *
 * Looked for: DIR/pyvenv.cfg for each directory DIR at the workspace's top,
 * DIR/.venv and DIR/venv one level down, and each environment of `.tox` and
 * `.nox`; in the first 256 directories of the top. pyvenv.cfg is the
 * workspace's, which the agent can write: it only ever leads to a Python
 * installation (PREFIX/bin/python* with the standard library's landmark,
 * PREFIX/lib/python3.N/os.py), never to whatever directory `home` names. */
#pragma once
#include "../common/util.h"

#define VENV_MAX 16 /* environments read, at most */

/* The resolved base interpreters (PREFIX/bin/python...) of the workspace's
 * virtual environments, each once, into out; with where[i] the
 * workspace-relative directory of the environment that named it first.
 * Nothing when the workspace cannot be read. */
void venv_interpreters(const char *workspace, struct strv *out, struct strv *where);

/* The base interpreter of the environment whose pyvenv.cfg text is cfg, or
 * NULL (malloc'd): its `home` key's python3 (or python), resolved, where it
 * is a Python installation's. */
char *venv_base(const char *cfg);
