// SPDX-License-Identifier: MIT
// sdk-client: an ACP client made of the official ACP TypeScript SDK
// (@agentclientprotocol/sdk, pinned by tests/scripts/install-acp-sdk.sh),
// so that `baton acp` is driven by a client no one here wrote. It spawns
// `$BATON_BIN ARGS...`, connects with the SDK's ClientApp over its
// ndJsonStream (SDK 2.x has no ClientSideConnection: the app API replaced
// it), runs a scenario, and prints one JSON line per observed fact for a
// test to assert on (tests/acp/test_sdk.py, test_sdk_live.py).
//
// usage: node sdk-client.mjs SCENARIO     SCENARIO: JSON text, or @FILE
// env:   BATON_TEST_ACP_SDK  the SDK's package directory (absolute)
//        BATON_BIN           the baton binary; the rest of the environment
//                            goes to it unchanged
//        BATON_TEST_WRAPPER  words put before it (valgrind ...), as the
//                            other tests do
//
// A scenario: {"args": [...], "cwd": DIR, "permission": KIND, "steps": [...]}
//   args        baton's arguments (default ["acp"])
//   cwd         baton's working directory (default this one)
//   permission  how session/request_permission is answered: the first
//               option of that kind (allow_once, reject_once, ...), or
//               "cancelled" (the default)
// Steps, in order:
//   {"request": METHOD, "params": {...}, "as": NAME, "async": true,
//    "timeout_ms": N}   a request through the SDK's ClientContext.request;
//                       async: go on at once ({"wait": NAME} collects it)
//   {"notify": METHOD, "params": {...}}   a notification
//   {"wait": NAME, "timeout_ms": N}       an async request's answer
//   {"until": PATTERN, "count": N, "timeout_ms": N}
//                       until N session/updates so far (default 1) match
//                       PATTERN (every member of PATTERN equal, recursively,
//                       to the update's)
//   {"active": CWD, "prompt": TEXT, "as": NAME}
//                       the SDK's own session helper: buildSession(CWD)
//                       (session/new), one ActiveSession.prompt, its
//                       readText() (the agent_message_chunk text to the stop)
//   {"sleep_ms": N}
// In params, a string "${NAME}" or "${NAME.a.b}" is replaced by that
// request's result (or a member of it); a prompt given as a string is one
// text block. readTextFile, writeTextFile and terminals are not offered.
//
// Facts (every one has "fact" and "t", ms since start):
//   response {step, as, method, result}   error {step, as, method, code, message}
//   update {sessionId, update}            permission {params, answer}
//   notified {step, method}: a notification went out
//   read_text {step, as, sessionId, text, stopReason}: an "active" step's end
//   invalid {method, issues}: a response the SDK's own zod schema rejects
//   sdk_error {text}: what the SDK logged with console.error (an update it
//     could not parse, a response to no request, ...)
//   timeout {step, what}    exit {code, signal}    done {}
// Exit status 0 when the scenario ran to its end (whatever the facts), 1
// when it could not (a timeout, baton gone, a bad scenario).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const sdkDir = process.env.BATON_TEST_ACP_SDK;
const baton = process.env.BATON_BIN;
if (!sdkDir || !baton) {
    process.stderr.write("sdk-client: BATON_TEST_ACP_SDK and BATON_BIN must be set\n");
    process.exit(1);
}
// the package's "." export (package.json "exports") and the zod schemas it
// validates incoming messages with, by absolute path
const acp = await import(`${sdkDir}/dist/v1/stable/acp.js`);
const zod = await import(`${sdkDir}/dist/v1/schema/zod.gen.js`);

const arg = process.argv[2];
if (!arg) {
    process.stderr.write("usage: node sdk-client.mjs SCENARIO (JSON text, or @FILE)\n");
    process.exit(1);
}
const scenario = JSON.parse(arg.startsWith("@") ? readFileSync(arg.slice(1), "utf8") : arg);
const t0 = Date.now();

function emit(fact, more) {
    process.stdout.write(JSON.stringify({ fact, t: Date.now() - t0, ...more }) + "\n");
}

// The SDK says what it could not handle only on console.error.
console.error = (...args) => {
    const text = args
        .map((a) => (typeof a === "string" ? a : JSON.stringify(a, (_k, v) => (v instanceof Error ? String(v) : v))))
        .join(" ");
    emit("sdk_error", { text });
};

const responseSchemas = {
    initialize: zod.zInitializeResponse,
    authenticate: zod.zAuthenticateResponse,
    "session/new": zod.zNewSessionResponse,
    "session/load": zod.zLoadSessionResponse,
    "session/resume": zod.zResumeSessionResponse,
    "session/list": zod.zListSessionsResponse,
    "session/close": zod.zCloseSessionResponse,
    "session/set_config_option": zod.zSetSessionConfigOptionResponse,
    "session/prompt": zod.zPromptResponse,
};

const results = {}; // NAME -> result
const pending = {}; // NAME -> promise of the async request's end
const updates = []; // every session/update's update, in arrival order
let wake = null; // resolves a step waiting for updates

function lookup(path) {
    const [name, ...rest] = path.split(".");
    if (!(name in results)) throw new Error(`no result named '${name}' yet`);
    return rest.reduce((v, k) => (v == null ? v : v[k]), results[name]);
}

function substitute(v) {
    if (typeof v === "string") {
        const m = /^\$\{([^}]+)\}$/.exec(v);
        return m ? lookup(m[1]) : v;
    }
    if (Array.isArray(v)) return v.map(substitute);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x)]));
    return v;
}

function matches(pattern, value) {
    if (pattern === null || typeof pattern !== "object") return pattern === value;
    if (value === null || typeof value !== "object") return false;
    return Object.entries(pattern).every(([k, p]) => matches(p, value[k]));
}

// Let the SDK finish handling what was read before an answer: it handles a
// response at once, but a notification through a chain of promises.
function settle() {
    return new Promise((r) => setImmediate(() => setImmediate(r)));
}

function deadline(ms, what) {
    let timer;
    const p = new Promise((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error(`timed out: ${what}`), { timeout: true })), ms);
    });
    p.catch(() => {}); // an async request's, raced only when waited for
    return { p, clear: () => clearTimeout(timer) };
}

const wrapper = (process.env.BATON_TEST_WRAPPER || "").split(/\s+/).filter(Boolean);
const argv = [...wrapper, baton, ...(scenario.args || ["acp"])];
const child = spawn(argv[0], argv.slice(1), {
    cwd: scenario.cwd || process.cwd(),
    stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
child.stdin.on("error", () => {}); // baton gone: the connection says so

const app = acp
    .client({ name: "baton-test-sdk-client" })
    .onNotification("session/update", ({ params }) => {
        updates.push(params.update);
        emit("update", { sessionId: params.sessionId, update: params.update });
        if (wake) wake();
    })
    .onRequest("session/request_permission", ({ params }) => {
        const kind = scenario.permission || "cancelled";
        const option = kind === "cancelled" ? null : params.options.find((o) => o.kind === kind);
        const answer = option
            ? { outcome: { outcome: "selected", optionId: option.optionId } }
            : { outcome: { outcome: "cancelled" } };
        emit("permission", { params, answer });
        return answer;
    });

async function request(ctx, i, step) {
    const params = substitute(step.params || {});
    if (step.request === "session/prompt" && typeof params.prompt === "string")
        params.prompt = [{ type: "text", text: params.prompt }];
    const name = step.as || null;
    try {
        const result = await ctx.request(step.request, params);
        await settle();
        const schema = responseSchemas[step.request];
        const check = schema ? schema.safeParse(result) : { success: true };
        if (!check.success) emit("invalid", { step: i, method: step.request, issues: check.error.issues });
        if (name) results[name] = result;
        emit("response", { step: i, as: name, method: step.request, result });
    } catch (e) {
        await settle();
        if (e && e.timeout) throw e;
        emit("error", { step: i, as: name, method: step.request, code: e?.code ?? null, message: e?.message ?? String(e), data: e?.data ?? null });
    }
}

async function active(ctx, i, step) {
    const name = step.as || null;
    await ctx.buildSession(substitute(step.active)).withSession(async (session) => {
        const result = session.newSessionResponse;
        const check = zod.zNewSessionResponse.safeParse(result);
        if (!check.success) emit("invalid", { step: i, method: "session/new", issues: check.error.issues });
        if (name) results[name] = result;
        emit("response", { step: i, as: name, method: "session/new", result });
        const answer = session.prompt(substitute(step.prompt));
        const text = await session.readText();
        const { stopReason } = await answer;
        emit("read_text", { step: i, as: name, sessionId: session.sessionId, text, stopReason });
    });
}

async function until(i, step) {
    const want = step.count || 1;
    const d = deadline(step.timeout_ms || 60000, `step ${i}: ${want} update(s) like ${JSON.stringify(step.until)}`);
    try {
        while (updates.filter((u) => matches(step.until, u)).length < want) {
            await Promise.race([new Promise((r) => (wake = r)), d.p]);
        }
    } finally {
        wake = null;
        d.clear();
    }
}

async function run(ctx) {
    const steps = scenario.steps || [];
    for (let i = 0; i < steps.length; i++) {
        const step = steps[i];
        const ms = step.timeout_ms || 120000;
        if (step.request) {
            const d = deadline(ms, `step ${i}: ${step.request}`);
            const done = request(ctx, i, step);
            if (step.async) {
                if (!step.as) throw new Error(`step ${i}: an async request needs "as"`);
                pending[step.as] = { done, d };
                continue;
            }
            try {
                await Promise.race([done, d.p]);
            } finally {
                d.clear();
            }
        } else if (step.notify) {
            await ctx.notify(step.notify, substitute(step.params || {}));
            emit("notified", { step: i, method: step.notify });
        } else if (step.wait) {
            const w = pending[step.wait];
            if (!w) throw new Error(`step ${i}: no async request named '${step.wait}'`);
            const d = deadline(ms, `step ${i}: the answer to '${step.wait}'`);
            try {
                await Promise.race([w.done, w.d.p, d.p]);
            } finally {
                w.d.clear();
                d.clear();
            }
        } else if (step.active) {
            const d = deadline(ms, `step ${i}: an active session's prompt`);
            try {
                await Promise.race([active(ctx, i, step), d.p]);
            } finally {
                d.clear();
            }
        } else if (step.until) {
            await until(i, step);
        } else if (step.sleep_ms) {
            await new Promise((r) => setTimeout(r, step.sleep_ms));
        } else {
            throw new Error(`step ${i}: no request, notify, wait, active, until or sleep_ms`);
        }
    }
    // async requests nobody waited for: collected, so none is lost
    for (const [name, w] of Object.entries(pending)) {
        try {
            await Promise.race([w.done, w.d.p]);
        } finally {
            w.d.clear();
        }
        delete pending[name];
    }
}

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
let failed = false;
try {
    await app.connectWith(stream, run);
    emit("done", {});
} catch (e) {
    failed = true;
    emit(e && e.timeout ? "timeout" : "failure", { what: e?.message ?? String(e) });
}
// stdin's end ends `baton acp` (what still runs is cancelled and waited for)
child.stdin.destroy();
const killer = setTimeout(() => child.kill("SIGKILL"), scenario.exit_timeout_ms || 30000);
const st = await exited;
clearTimeout(killer);
emit("exit", st);
process.exit(failed ? 1 : 0);
