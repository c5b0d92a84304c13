/* log_help.h - the help of `warden log` (log_help.c), which log_cmd.c prints
 * for --help and, up to its first blank line (the synopsis), after a usage
 * error. */
#pragma once

extern const char log_usage[];
