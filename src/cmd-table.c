/* SPDX-License-Identifier: MIT */
/*
 * cmd-table: the commands of the CLI, their operands, options and help
 * text. The parser (cmd-args.c), `baton help`, the man page and the shell
 * completions all read this one table.
 */
#include <stddef.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"

#define HELP_JSON "the event stream as JSON lines on stdout, nothing\nelse there"
#define HELP_APPROVAL                                                                              \
    "deny (default): decline every approval request;\nauto: accept every request;\n"               \
    "never: tell the coder not to ask (it runs without\napproval); ask: a person answers each\n"   \
    "one (inline on a terminal, `baton approve`,\n`baton answer`); unanswered within the idle\n"   \
    "timeout: declined"
#define HELP_ACP_APPROVAL                                                                          \
    "what a coder's approval request gets when the editor\ndoes not answer in time: deny "         \
    "(default), auto\n(accept), never (tell the coder not to ask)"
#define HELP_TIMEOUT "stop the turn after S seconds (0 = no limit, the\ndefault)"
#define HELP_IDLE                                                                                  \
    "stop a coder that makes no progress for S seconds:\nstalled (default 600, 0 = off)"
#define HELP_DETACH                                                                                \
    "run the turn in a detached worker that outlives this\nshell; print the conversation id "      \
    "(`baton attach`\nfollows it)"

/* The options of every command that runs a turn. */
#define TURN_OPTS                                                                                  \
    {.id = 'j', .name = "json", .help = HELP_JSON},                                                \
        {.id = 'a',                                                                                \
         .name = "approval",                                                                       \
         .value = "POLICY",                                                                        \
         .help = HELP_APPROVAL,                                                                    \
         .choices = "deny|auto|never|ask"},                                                        \
        {.id = 't', .name = "timeout", .value = "S", .help = HELP_TIMEOUT},                        \
        {.id = 'i', .name = "idle-timeout", .value = "S", .help = HELP_IDLE},                      \
        {.id = 'r',                                                                                \
         .name = "no-retry",                                                                       \
         .help = "no retries of failed model requests (pi, claude)"},                              \
        {.id = 'S',                                                                                \
         .name = "no-snapshot",                                                                    \
         .help = "no snapshots of the git working tree: the turn\nrecords no changes "             \
                 "(also BATON_SNAPSHOTS=0)"},                                                      \
    {                                                                                              \
        .id = 'd', .name = "detach", .help = HELP_DETACH                                           \
    }

#define PROMPT_NOTE                                                                                \
    "PROMPT is the text of the turn, or - to read it from stdin; without PROMPT,\n"                \
    "a stdin that is not a terminal is read. Put -- before a prompt that starts\n"                 \
    "with '-'.\n"

static const struct bt_opt serve_opts[] = {
    {.id = 'l',
     .name = "listen",
     .value = "HOST:PORT",
     .help = "the address to listen on (default 127.0.0.1:7700;\nport 0 picks a free one)"},
    {.id = 'R',
     .name = "allow-remote",
     .help = "listen on an address that is not loopback (anyone\nwho reaches it and has the token "
             "drives your coders)"},
    {.id = 'p',
     .name = "ping",
     .value = "S",
     .help = "seconds between keepalive pings on event streams\n(default 15, at most 30)"},
    {.id = 'T',
     .name = "max-turns",
     .value = "N",
     .help = "turns whose coders run at once (its workers and\nevery other detached one); "
             "more wait, in order\n(default $BATON_MAX_TURNS, else from the cores\nand memory)"},
    {0},
};

static const struct bt_opt acp_opts[] = {
    {.id = 'c',
     .letter = 'c',
     .name = "coder",
     .value = "CODER",
     .help = "a new session's coder (default: the first `baton\ncoders` lists); the editor "
             "can pick another"},
    {.id = 'm',
     .letter = 'm',
     .name = "model",
     .value = "MODEL",
     .help = "a new session's model, as the coder names it\n(default: its own)"},
    {.id = 'a',
     .name = "approval",
     .value = "POLICY",
     .help = HELP_ACP_APPROVAL,
     .choices = "deny|auto|never"},
    {.id = 't', .name = "timeout", .value = "S", .help = HELP_TIMEOUT},
    {.id = 'i', .name = "idle-timeout", .value = "S", .help = HELP_IDLE},
    {.id = 'r', .name = "no-retry", .help = "no retries of failed model requests (pi, claude)"},
    {.id = 'S',
     .name = "no-snapshot",
     .help =
         "no snapshots of the git working tree: turns record\nno changes (also BATON_SNAPSHOTS=0)"},
    {.id = 'L',
     .name = "no-model-list",
     .help = "do not start a coder to list its models (codex, pi):\nthe model select offers "
             "the default and the models\nused before"},
    {0},
};

static const struct bt_opt run_opts[] = {
    {.id = 'c',
     .letter = 'c',
     .name = "coder",
     .value = "CODER",
     .help = "the coder (default: the first `baton coders` lists)"},
    {.id = 'm',
     .letter = 'm',
     .name = "model",
     .value = "MODEL",
     .help = "the model, as the coder names it (default: its own)"},
    {.id = 'C',
     .letter = 'C',
     .name = "cwd",
     .value = "DIR",
     .help = "the project directory (default: the current one)"},
    {.id = 'W',
     .name = "worktree",
     .help = "run the conversation in a git worktree of its own,\non a new branch "
             "baton/<short id> from HEAD\n(under $BATON_HOME/worktrees)"},
    {.id = 'b',
     .name = "branch",
     .value = "NAME",
     .help = "with --worktree: the new branch's name"},
    TURN_OPTS,
    {0}};

static const struct bt_opt send_opts[] = {
    TURN_OPTS,
    {.id = 's',
     .name = "steer",
     .help = "put PROMPT into the running turn (as `baton steer`)\ninstead of queueing it"},
    {.id = 'f', .name = "force", .help = "send to a conversation handed off to the coder's UI"},
    {0}};

static const struct bt_opt steer_opts[] = {
    {.id = 'j', .name = "json", .help = "print what became of it as one JSON object"}, {0}};

static const struct bt_opt retry_opts[] = {
    TURN_OPTS,
    {.id = 'f', .name = "force", .help = "retry in a conversation handed off to the coder's UI"},
    {0}};

static const struct bt_opt worker_opts[] = {
    TURN_OPTS,
    {.id = 'f', .name = "force", .help = "a conversation handed off to the coder's UI"},
    {.id = 'n', .name = "notify", .help = "report the run and its end on fd 3"},
    {0}};

static const struct bt_opt attach_opts[] = {
    {.id = 'j', .name = "json", .help = "the events as JSON lines on stdout"},
    {.id = 'f',
     .name = "from",
     .value = "SEQ",
     .help = "start at event SEQ (default 1: the whole turn)"},
    {0}};

/* The output options of the list commands. */
#define LIST_OPTS(what)                                                                            \
    {.id = 'j',                                                                                    \
     .name = "json",                                                                               \
     .help = "one JSON object per " what " per line (JSON lines:\njq reads them)"},                \
    {                                                                                              \
        .id = 'J', .name = "json-array", .help = "all of them as one JSON array"                   \
    }

static const struct bt_opt ls_opts[] = {
    LIST_OPTS("conversation"),
    {.id = 'n',
     .name = "limit",
     .value = "N",
     .help = "at most N conversations, newest first (default: all)"},
    {0}};

static const struct bt_opt show_opts[] = {
    {.id = 'j', .name = "json", .help = "the conversation and its messages as one JSON object"},
    {.id = 'd',
     .name = "debug",
     .help = "each answer's run: state, coder version, exit, error\n"
             "kind, the coder's stderr tail and its raw output file"},
    {.id = 'l', .name = "last", .value = "N", .help = "only the last N messages"},
    {.id = 'r', .name = "raw", .help = "the last run's raw coder stdout, as the coder wrote it"},
    {0}};

static const struct bt_opt diff_opts[] = {
    {.id = 't',
     .name = "turn",
     .value = "N",
     .help = "only turn N's changes (default: every turn's)"},
    {.id = 's', .name = "stat", .help = "a line per file with its lines added and removed"},
    {.id = 'j',
     .name = "json",
     .help = "{conversation, turn, from, to, changes} as one JSON\nobject (changes as "
             "turn.completed has them)"},
    {0}};

static const struct bt_opt approve_opts[] = {
    {.id = 'y', .name = "allow", .help = "allow the request once"},
    {.id = 'A',
     .name = "always",
     .help = "allow it, and requests of its kind (command,\nfile_change, ...) for the rest "
             "of the turn"},
    {.id = 'n', .name = "deny", .help = "deny the request"},
    {.id = 'l', .name = "list", .help = "list what waits for an answer, with the ids"},
    {.id = 'j',
     .name = "json",
     .help = "with --list: the approval.requested events as one\nJSON array"},
    {0}};

static const struct bt_opt answer_opts[] = {
    {.id = 'I',
     .name = "id",
     .value = "ID",
     .help = "the question's request id (default: the only\nquestion waiting)"},
    {.id = 'n', .name = "decline", .help = "refuse to answer"},
    {0}};

static const struct bt_opt keep_opts[] = {
    {.id = 'p',
     .name = "prune",
     .help = "then remove the worktree and its branch (the base\nholds their work now) and, in a "
             "group, the other\nconversations' worktrees and branches with their\nwork"},
    {.id = 'j',
     .name = "json",
     .help = "{conversation, branch, base, how, commit, committed,\ncheckout, pruned, "
             "pruned_others} as "
             "one JSON object"},
    {0}};

static const struct bt_opt group_opts[] = {
    {.id = 'j',
     .name = "json",
     .help = "ls: one JSON object per group per line; show: the\ngroup with its members as "
             "one JSON object"},
    {0}};

static const struct bt_opt search_opts[] = {
    LIST_OPTS("conversation"),
    {.id = 'n',
     .name = "limit",
     .value = "N",
     .help = "at most N conversations, newest first (default 50)"},
    {0}};

static const struct bt_opt handoff_opts[] = {
    {.id = 't', .name = "tmux", .help = "run it in a detached tmux session baton-<short id>"},
    {.id = 'p', .name = "print", .help = "print the command line (shell-quoted), do nothing else"},
    {0}};

static const struct bt_opt rm_opts[] = {
    {.id = 'y',
     .letter = 'y',
     .name = "yes",
     .help = "do not ask first (rm asks only on a terminal)"},
    {.id = 'f',
     .name = "force",
     .help = "remove the conversation's worktree and branch even\nwith changes or commits of "
             "their own"},
    {0}};

static const struct bt_opt coders_opts[] = {LIST_OPTS("coder"), {0}};

const struct bt_exit_doc bt_exit_codes[] = {
    {.code = BT_EXIT_OK,
     .name = "completed",
     .text = "the turn completed (for search: something matched)"},
    {.code = BT_EXIT_FAILED,
     .name = "failed",
     .text = "the turn failed; the error event and `baton show` say why (for search: nothing "
             "matched)"},
    {.code = BT_EXIT_USAGE,
     .name = "usage",
     .text = "usage error: a bad option, an unknown conversation, an empty prompt, or a request "
             "refused in the conversation's state"},
    {.code = BT_EXIT_NOT_INSTALLED,
     .name = "coder not installed",
     .text = "the coder is not installed"},
    {.code = BT_EXIT_AUTH, .name = "auth required", .text = "the coder needs a login"},
    {.code = BT_EXIT_CANCELLED, .name = "cancelled", .text = "the turn was cancelled"},
    {.code = BT_EXIT_STDOUT_CLOSED,
     .name = "stdout closed",
     .text = "baton's stdout was closed under the turn (`baton run ... | head`), which was stopped "
             "as a cancel would stop it; 128 + SIGPIPE, as a shell reports a tool SIGPIPE killed"},
    {0},
};

const struct bt_cmd bt_cmds[] = {
    {.name = "run",
     .run = bt_cmd_run,
     .operands = "[PROMPT|-]",
     .summary = "start a conversation with one turn",
     .opts = run_opts,
     .notes =
         PROMPT_NOTE "With --worktree, the directory must be in a git repository with a commit;\n"
                     "the worktree has the whole repository, and the turns run at the directory's\n"
                     "place in it. `baton diff` shows what they changed; `baton rm` removes the\n"
                     "worktree and its branch when nothing would be lost.\n"},
    {.name = "send",
     .run = bt_cmd_send,
     .operands = "CONV [PROMPT|-]",
     .summary = "next turn of a conversation, queued while one runs",
     .opts = send_opts,
     .notes = PROMPT_NOTE
     "CONV is a conversation id or a unique prefix of one. The turn runs in the\n"
     "conversation's own directory with its coder and model, resuming its native\n"
     "session. While a turn of CONV runs (from any terminal), the prompt is queued\n"
     "instead and send exits 0 at once; when the running turn completes, everything\n"
     "queued goes out as the next turn, joined by blank lines (after a failed or\n"
     "cancelled turn it waits for the next send).\n"},
    {.name = "retry",
     .run = bt_cmd_retry,
     .operands = "CONV",
     .summary = "the last prompt again after a failed, cancelled or interrupted turn",
     .opts = retry_opts,
     .notes = "CONV is a conversation id or a unique prefix of one. A completed turn is never\n"
              "sent again (exit 2).\n"},
    {.name = "attach",
     .run = bt_cmd_attach,
     .operands = "CONV",
     .summary = "follow the running (or last) turn of a conversation",
     .opts = attach_opts,
     .notes = "Ends when the turn ends, with the turn's exit code. Ctrl-C leaves the turn\n"
              "running.\n"},
    {.name = "cancel",
     .run = bt_cmd_cancel,
     .operands = "CONV",
     .summary = "stop the running turn of a conversation",
     .notes = "The stop is recorded first, then the turn's owner stops its coder (within\n"
              "about 100 ms); cancel waits for the turn to end and says how it ended.\n"},
    {.name = "steer",
     .run = bt_cmd_steer,
     .operands = "CONV [PROMPT|-]",
     .summary = "put a message into the running turn of a conversation",
     .opts = steer_opts,
     .notes = PROMPT_NOTE
     "The message goes into the running turn on the coder's own protocol (codex\n"
     "turn/steer, pi steer, claude a user message): the coder takes it in before\n"
     "its next model request, and it is part of that turn (`baton show`). With no\n"
     "turn running, a coder that cannot steer (the ACP agents; `baton coders\n"
     "--json` says which can), or a turn that ends first, it is queued as the next\n"
     "turn's message instead, and steer says so; it is never lost or sent twice.\n"},
    {.name = "approve",
     .run = bt_cmd_approve,
     .operands = "CONV [ID]",
     .summary = "allow or deny a running turn's approval request (--approval ask)",
     .opts = approve_opts,
     .notes = "ID is the request_id of its approval.requested event (`--list` shows what\n"
              "waits); without it, the only request waiting. The answer is stored first,\n"
              "then the turn's owner gives it to the coder. A request that was answered,\n"
              "or declined when the idle timeout passed (by \"timeout\") or the turn was\n"
              "stopped, takes no late answer (exit 1).\n"},
    {.name = "answer",
     .run = bt_cmd_answer,
     .operands = "CONV [ANSWER]...",
     .summary = "answer a running turn's question (--approval ask)",
     .opts = answer_opts,
     .notes = "One ANSWER per question, in order: an option's number (`baton approve CONV\n"
              "--list` numbers them), several as 1,3 where the question takes several, or\n"
              "the answer's own words.\n"},
    {.name = "rm-queued",
     .run = bt_cmd_rm_queued,
     .operands = "CONV N",
     .summary = "take back a queued message before it goes",
     .notes = "N is the message's queue number in CONV, as `baton send` and `baton show`\n"
              "print it (#N): 1 is the first message ever queued in CONV. Numbers are never\n"
              "reused.\n"},
    {.name = "ls",
     .run = bt_cmd_ls,
     .operands = "",
     .summary = "list conversations, newest first",
     .opts = ls_opts,
     .notes = "Times are local, with their zone; --json gives them in UTC (RFC 3339).\n"},
    {.name = "show",
     .run = bt_cmd_show,
     .operands = "CONV",
     .summary = "show a conversation's messages and runs",
     .opts = show_opts,
     .notes = ""},
    {.name = "diff",
     .run = bt_cmd_diff,
     .operands = "CONV",
     .summary = "show what a conversation's turns changed in its git working tree",
     .opts = diff_opts,
     .notes = "The changes are those between snapshots of the working tree taken before\n"
              "and after each turn (turn.completed's changes): edits of yours made in the\n"
              "directory during a turn are among them, unless the conversation has a\n"
              "worktree of its own (run --worktree).\n"
              "Colour on a terminal only (NO_COLOR respected). Exit 1 when nothing was\n"
              "recorded (a directory outside git). Turns that changed nothing print\n"
              "nothing and say so on stderr (\"no changes in turn N\"), exit 0.\n"},
    {.name = "keep",
     .run = bt_cmd_keep,
     .operands = "CONV",
     .summary = "bring a worktree conversation's work into the branch it started from",
     .opts = keep_opts,
     .notes = "For a conversation with a worktree of its own (run --worktree): its changes\n"
              "are committed on its branch (as you, by git's user.name and user.email, else\n"
              "as baton), then the branch it started from is fast-forwarded to it or gets a\n"
              "merge commit. Where that branch is checked out, its files follow, never over\n"
              "edits of yours: those, or a conflict between the two branches, leave it as it\n"
              "was (exit 1, the files named). A worktree made from a detached HEAD has no\n"
              "branch to go to (exit 2).\n"},
    {.name = "group",
     .run = bt_cmd_group,
     .operands = "ls|show [GROUP]",
     .summary = "groups of conversations started together (run -c a,b,c)",
     .opts = group_opts,
     .notes = "ls: the groups, newest first: id, conversations, when, the prompt's first\n"
              "line. show GROUP (an id or a unique prefix of one): its conversations side\n"
              "by side: coder, status of the last turn, time, tokens and cost of its turns,\n"
              "files changed with lines added and removed, branch. `baton diff`, `keep`\n"
              "and `rm` take each conversation.\n"},
    {.name = "search",
     .run = bt_cmd_search,
     .operands = "WORD...",
     .summary = "find conversations by words in their title or messages",
     .opts = search_opts,
     .notes = "A conversation matches when its title or one of its messages holds every\n"
              "WORD (case and accents ignored; words are plain text, never query syntax).\n"
              "Exit 0 when something matched, 1 when nothing did.\n"},
    {.name = "rm",
     .run = bt_cmd_rm,
     .operands = "CONV",
     .summary = "delete a conversation, its runs and the coder's session",
     .opts = rm_opts,
     .notes = "Deletes the conversation's messages, runs, events and run files, and the\n"
              "coder's own session: its files found inside the coder's session directory\n"
              "(codex rollout, pi session file, claude transcript, gemini chat files and\n"
              "directories, copilot session directory), or for opencode by `opencode\n"
              "session delete ID`; not when the conversation was handed off to the\n"
              "coder's terminal UI or its handoff tmux session still runs (left running).\n"
              "A conversation's own worktree (run --worktree) goes with its branch, only\n"
              "when that loses nothing: changes in it, or commits its branch has and the\n"
              "branch it started from has not, refuse rm (exit 2) unless --force.\n"
              "Refused while a turn runs. On a terminal it first says what goes and asks:\n"
              "any answer but y or yes removes nothing and exits 1.\n"},
    {.name = "handoff",
     .run = bt_cmd_handoff,
     .operands = "CONV",
     .summary = "continue a conversation in its coder's own terminal UI",
     .opts = handoff_opts,
     .notes = "Replaces baton with the coder's interactive command resuming the conversation's\n"
              "native session (codex resume ID, pi --session FILE) in its directory, with\n"
              "baton's environment. The conversation becomes transferred: `baton send` then\n"
              "refuses unless --force. Refused, in all three ways, while a turn runs, messages\n"
              "wait queued or the conversation's tmux session still runs (exit 2).\n"},
    {.name = "coders",
     .run = bt_cmd_coders,
     .operands = "",
     .summary = "installed coders with version and path",
     .opts = coders_opts,
     .notes = "One line per coder: its version (asked with --version) and the program baton\n"
              "runs. A version baton was not tested with (the versions of its recordings,\n"
              "fixtures/<coder>/<version>/ in baton's source) gets a second line naming\n"
              "the versions it was tested with. --json: one object per coder with coder,\n"
              "installed, path, launcher, version, tested (true or false; null when not\n"
              "installed or the version is unknown) and tested_versions (an array).\n"},
    {.name = "acp",
     .run = bt_cmd_acp,
     .summary = "be an ACP agent for an editor, on stdin and stdout",
     .opts = acp_opts,
     .notes = "An editor that speaks the Agent Client Protocol (Zed, JetBrains IDEs, Neovim\n"
              "and Emacs plugins) starts `baton acp` as its agent: every coder baton drives\n"
              "answers behind it, each session a baton conversation (`baton ls` lists it,\n"
              "`baton acp` opens one the CLI started). stdout carries the protocol only.\n"
              "Setting up an editor: docs/acp-agent.md.\n"},
    {.name = "serve",
     .run = bt_cmd_serve,
     .operands = "",
     .summary = "the HTTP + SSE API and a web page, on loopback",
     .opts = serve_opts,
     .notes = "Prints the page's address with the token (kept in $BATON_HOME/serve.token,\n"
              "mode 0600) on stdout. Every /v1 request needs the token; Host and Origin\n"
              "must be this server's own. Turns started through it run in detached\n"
              "workers, so stopping the server loses nothing. The API: docs/api.md and\n"
              "GET /v1/openapi.json.\n"},
    {.name = "completion",
     .run = bt_cmd_completion,
     .operands = "bash|zsh",
     .summary = "print a shell completion script",
     .notes = "Prints the completion script of the shell named, made from this help text:\n"
              "commands, their options, coders after -c, conversation ids where CONV goes.\n"
              "bash: `source <(baton completion bash)` in ~/.bashrc; zsh: save it as _baton\n"
              "in a directory of $fpath. `cmake --install` installs both, and baton(1).\n"},
    {.name = "help",
     .run = NULL, /* main.c answers it */
     .operands = "[COMMAND]",
     .summary = "this help, or a command's",
     .notes = ""},
    {.name = "__worker",
     .run = bt_cmd_worker,
     .operands = "MODE CONV",
     .summary = "a detached worker (MODE flush or retry)",
     .opts = worker_opts,
     .notes = ""},
    {.name = "__man",
     .run = bt_cmd_man,
     .operands = "",
     .summary = "the man page baton(1) in roff",
     .notes = ""},
    {.name = "__ids",
     .run = bt_cmd_ids,
     .operands = "[PREFIX]",
     .summary = "conversation ids and titles, for completion",
     .notes = ""},
};
const size_t bt_n_cmds = sizeof(bt_cmds) / sizeof(bt_cmds[0]);

const struct bt_cmd *bt_cmd_find(const char *name)
{
    for (size_t i = 0; i < bt_n_cmds; i++)
        if (strcmp(bt_cmds[i].name, name) == 0)
            return &bt_cmds[i];
    return NULL;
}
