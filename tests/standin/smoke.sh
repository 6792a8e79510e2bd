#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# smoke.sh: start baton-standin, check each scripted behaviour over HTTP with
# curl, then stop it with SIGTERM and check that it exits 0 and logged every
# request. Run by ctest; exits 77 (skipped) when curl or the wrapper is
# missing.
#
# usage: smoke.sh [WRAPPER ARGS...] PATH-TO-baton-standin
#   e.g. smoke.sh valgrind --error-exitcode=9 --leak-check=full build/.../baton-standin
set -euo pipefail

command -v curl >/dev/null 2>&1 || exit 77
command -v "$1" >/dev/null 2>&1 || exit 77
dir="$(mktemp -d)"
pid=
cleanup() {
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

fail() {
    printf 'smoke: %s\n' "$*" >&2
    exit 1
}

post() { # body → response on stdout
    curl -sS -N -X POST -H 'Content-Type: application/json' --data-binary "$1" "$url/v1/responses"
}

chat() { # body → Chat Completions response on stdout
    curl -sS -N -X POST -H 'Content-Type: application/json' --data-binary "$1" \
        "$url/v1/chat/completions"
}

chat_text() { # chat response → the concatenated content deltas
    grep -o '"delta":{"content":"[^"]*"' <<<"$1" | sed 's/.*"content":"//; s/"$//' | tr -d '\n'
}

expect() { # haystack needle what
    case "$1" in
    *"$2"*) ;;
    *) fail "$3: '$2' not found" ;;
    esac
}

"$@" --port-file "$dir/port" --log "$dir/log" >"$dir/out" 2>"$dir/err" &
pid=$!
for _ in $(seq 200); do
    [ -s "$dir/port" ] && break
    sleep 0.05
done
[ -s "$dir/port" ] || fail "no port file"
port="$(cat "$dir/port")"
url="http://127.0.0.1:$port"
[ "$(head -n 1 "$dir/out")" = "listening $url" ] || fail "bad first line: $(head -n 1 "$dir/out")"

r="$(post '{"model":"m","stream":true,"input":[{"role":"user","content":"Say hi"}]}')"
expect "$r" '"delta":"Hello! Y"' "echo deltas"
expect "$r" '"text":"Hello! You said: Say hi"' "echo text"
expect "$r" '"cached_tokens":' "usage"
expect "$r" 'event: response.completed' "completed"

r="$(post '{"model":"m","stream":true,"input":"[[shell:echo ok]]"}')"
expect "$r" '"name":"exec_command","arguments":"{\"cmd\":\"echo ok\"}"' "shell call"

r="$(post '{"model":"m","stream":true,"input":[{"role":"user","content":"[[shell:echo ok]]"},
  {"type":"function_call_output","call_id":"c","output":"Chunk ID: 1\nOutput:\nok\n"}]}')"
expect "$r" '"text":"Tool output: ok"' "tool output"

r="$(post '{"model":"m","stream":true,"input":"[[large:5000]]"}')"
[ "$(grep -c '^data: .*output_text.delta' <<<"$r")" -eq 5 ] || fail "large: want 5 deltas"

r="$(post '{"model":"m","stream":true,"input":"[[failed:context_length_exceeded]]"}')"
expect "$r" '"code":"context_length_exceeded"' "failed"

code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","stream":true,"input":"[[http500]]"}' "$url/v1/responses")"
[ "$code" = 500 ] || fail "http500: got $code"
code="$(curl -sS -o /dev/null -w '%{http_code}' "$url/nowhere")"
[ "$code" = 404 ] || fail "unknown path: got $code"

# A slow stream cut by the client after 1 s: a few deltas, then the server
# must notice the disconnect and keep serving.
r="$(curl -sS -N -m 1 -X POST --data-binary '{"model":"m","stream":true,"input":"[[slow]]"}' \
    "$url/v1/responses" || true)"
n="$(grep -c '^data: .*output_text.delta' <<<"$r" || true)"
if [ "$n" -lt 3 ] || [ "$n" -gt 8 ]; then
    fail "slow: $n deltas in 1 s"
fi
expect "$(curl -sS "$url/v1/models")" '"object":"list"' "models"

# Chat Completions (pi): the same script, pi's tool names, usage on request.
r="$(chat '{"model":"m","stream":true,"stream_options":{"include_usage":true},
  "messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"Say hi"}]}]}')"
expect "$r" '"delta":{"role":"assistant","content":""}' "chat role chunk"
[ "$(chat_text "$r")" = "Hello! You said: Say hi" ] || fail "chat echo: '$(chat_text "$r")'"
expect "$r" '"finish_reason":"stop"' "chat finish"
expect "$r" '"choices":[],"usage":{"prompt_tokens":' "chat usage chunk"
expect "$r" '"prompt_tokens_details":{"cached_tokens":' "chat cached tokens"
[ "$(tail -n 1 <<<"$r")" = "data: [DONE]" ] || fail "chat: no [DONE] at the end"

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"Say hi"}]}')"
case "$r" in *'"usage"'*) fail "chat: usage without stream_options.include_usage" ;; esac

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[shell:echo ok]]"}]}')"
expect "$r" '"tool_calls":[{"index":0,"id":"call_' "chat tool call id"
expect "$r" '"function":{"name":"bash","arguments":""}' "chat tool name"
args="$(grep -o '"function":{"arguments":".*"}}]' <<<"$r" | sed 's/.*"arguments":"//; s/"}}]$//' | tr -d '\n')"
[ "$args" = '{\"command\":\"echo ok\"}' ] || fail "chat tool arguments: '$args'"
expect "$r" '"finish_reason":"tool_calls"' "chat tool finish"

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"[[shell:echo ok]]"}]},
  {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"c","content":"ok\nmore\n"}]}')"
[ "$(chat_text "$r")" = "Tool output: ok" ] || fail "chat tool output: '$(chat_text "$r")'"

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[write:a.txt]]"}]}')"
expect "$r" '"function":{"name":"write","arguments":""}' "chat write tool"

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[reasoning]] x"}]}')"
expect "$r" '"delta":{"reasoning_content":"Thinking"}' "chat reasoning"

pi_tools='"tools":[{"type":"function","function":{"name":"bash","parameters":{"properties":{"command":{}}}}},
  {"type":"function","function":{"name":"write","parameters":{"properties":{"path":{},"content":{}}}}}]'
r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[failed:context_length_exceeded]]"}],'"$pi_tools"'}')"
expect "$r" '"code":"context_length_exceeded"' "chat failed"

code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[http503]]"}]}' \
    "$url/v1/chat/completions")"
[ "$code" = 503 ] || fail "chat http503: got $code"

r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[large:5000]]"}]}')"
[ "$(grep -c '^data: .*"delta":{"content"' <<<"$r")" -eq 5 ] || fail "chat large: want 5 deltas"

# Anthropic Messages (claude): SSE events, claude's tool names, tool_result
# continuing the script, errors in Anthropic's shape, count_tokens.
msgs() { # body → Messages response on stdout (claude adds ?beta=true)
    curl -sS -N -X POST -H 'Content-Type: application/json' --data-binary "$1" \
        "$url/v1/messages?beta=true"
}
msgs_text() { # Messages response → the concatenated text deltas
    grep -o '"type":"text_delta","text":"[^"]*"' <<<"$1" | sed 's/.*"text":"//; s/"$//' | tr -d '\n'
}
r="$(msgs '{"model":"m","stream":true,"max_tokens":100,"messages":[{"role":"user","content":[
  {"type":"text","text":"<system-reminder>\nctx\n</system-reminder>"},{"type":"text","text":"Say hi"}]}]}')"
expect "$r" 'event: message_start' "messages start"
expect "$r" '"cache_read_input_tokens":' "messages usage"
expect "$r" '"content_block":{"type":"text","text":""}' "messages text block"
[ "$(msgs_text "$r")" = "Hello! You said: Say hi" ] || fail "messages echo: '$(msgs_text "$r")'"
expect "$r" '"stop_reason":"end_turn"' "messages stop reason"
[ "$(tail -n 1 <<<"$r")" = 'data: {"type":"message_stop"}' ] || fail "messages: no message_stop at the end"

r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[shell:echo ok]]"}]}')"
expect "$r" '"content_block":{"type":"tool_use","id":"toolu_' "messages tool_use"
expect "$r" '"name":"Bash","input":{}' "messages tool name"
args="$(grep '"partial_json":' <<<"$r" | sed 's/.*"partial_json":"//; s/"}}$//' | tr -d '\n')"
[ "$args" = '{\"command\":\"echo ok\"}' ] || fail "messages tool input: '$args'"
expect "$r" '"stop_reason":"tool_use"' "messages tool stop reason"

r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[shell:echo ok]]"},
  {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"echo ok"}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok\nmore"}]}]}')"
[ "$(msgs_text "$r")" = "Tool output: ok" ] || fail "messages tool result: '$(msgs_text "$r")'"

r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[write:a.txt]]"}]}')"
expect "$r" '"name":"Write","input":{}' "messages write tool"
r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[reasoning]] x"}]}')"
expect "$r" '"content_block":{"type":"thinking","thinking":"","signature":""}' "messages thinking"
expect "$r" '"type":"thinking_delta","thinking":"Thinking"' "messages thinking delta"
expect "$r" '"type":"signature_delta"' "messages signature"
r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[large:5000]]"}]}')"
[ "$(grep -c '"type":"text_delta"' <<<"$r")" -eq 5 ] || fail "messages large: want 5 deltas"
r="$(msgs '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[failed:overloaded_error]]"}]}')"
expect "$r" 'event: error' "messages stream error"
expect "$r" '"type":"overloaded_error"' "messages stream error type"
r="$(msgs '{"model":"m","messages":[{"role":"user","content":"Say hi"}]}')"
expect "$r" '"content":[{"type":"text","text":"Hello! You said: Say hi"}]' "messages without stream"

for st in 401:authentication_error 429:rate_limit_error 500:api_error; do
    body="$(curl -sS -w ' %{http_code}' -X POST --data-binary \
        "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"[[http${st%%:*}]]\"}]}" \
        "$url/v1/messages?beta=true")"
    expect "$body" "{\"type\":\"error\",\"error\":{\"type\":\"${st#*:}\"" "messages http${st%%:*} body"
    expect "$body" " ${st%%:*}" "messages http${st%%:*} status"
done
code="$(curl -sS -o "$dir/ctx" -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[failed:context_length_exceeded]]"}]}' \
    "$url/v1/messages")"
[ "$code" = 400 ] || fail "messages context overflow: got $code"
expect "$(cat "$dir/ctx")" 'prompt is too long' "messages context overflow body"
expect "$(curl -sS -X POST --data-binary '{"model":"m","messages":[{"role":"user","content":"hi"}]}' \
    "$url/v1/messages/count_tokens?beta=true")" '{"input_tokens":' "count_tokens"

# Chat Completions as opencode and copilot use it: the dialect from the
# declared tools, copilot's <current_datetime> wrapper dropped, no stream.
oc_tools='"tools":[{"type":"function","function":{"name":"bash","parameters":{"properties":{"command":{}}}}},
  {"type":"function","function":{"name":"write","parameters":{"properties":{"filePath":{},"content":{}}}}}]'
r="$(chat '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[write:a.txt]]"}],'"$oc_tools"'}')"
args="$(grep -o '"function":{"arguments":".*"}}]' <<<"$r" | sed 's/.*"arguments":"//; s/"}}]$//' | tr -d '\n')"
expect "$args" 'filePath\":\"a.txt' "opencode write path"
cp_tools='"tools":[{"type":"function","function":{"name":"bash","parameters":{"properties":{"command":{}}}}},
  {"type":"function","function":{"name":"create","parameters":{"properties":{"path":{},"file_text":{}}}}}]'
r="$(chat '{"model":"m","messages":[{"role":"user","content":"<current_datetime>2026-01-01</current_datetime>\n\n[[write:a.txt]]"}],'"$cp_tools"'}')"
expect "$r" '"object":"chat.completion"' "chat without stream"
expect "$r" '"name":"create","arguments":"{\"path\":\"a.txt\",\"file_text\":' "copilot create"
expect "$r" '"finish_reason":"tool_calls"' "chat whole finish"
r="$(chat '{"model":"m","messages":[{"role":"user","content":"<current_datetime>2026-01-01</current_datetime>\n\nSay hi"}]}')"
expect "$r" '"content":"Hello! You said: Say hi"' "chat whole echo, unwrapped"
expect "$r" '"usage":{"prompt_tokens":' "chat whole usage"
code="$(curl -sS -o "$dir/ctx" -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","messages":[{"role":"user","content":"[[failed:context_length_exceeded]]"}]}' \
    "$url/v1/chat/completions")"
[ "$code" = 400 ] || fail "chat whole context overflow: got $code"
expect "$(cat "$dir/ctx")" '"code":"context_length_exceeded"' "chat whole context overflow body"
code="$(curl -sS -o "$dir/ctx" -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[failed:context_length_exceeded]]"}],'"$oc_tools"'}' \
    "$url/v1/chat/completions")"
[ "$code" = 400 ] || fail "opencode context overflow: got $code"
code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST --data-binary \
    '{"model":"m","stream":true,"messages":[{"role":"user","content":"[[failed:context_length_exceeded]]"}]}' \
    "$url/v1/chat/completions")"
[ "$code" = 400 ] || fail "context overflow without tools: got $code"
expect "$(cat "$dir/ctx")" 'maximum context length' "opencode context overflow body"

# Gemini API (gemini-cli): SSE frames of GenerateContentResponse, gemini's
# tool names, functionResponse continuing the script, Google's error shape.
gem() { # method body → response on stdout
    curl -sS -N -X POST -H 'Content-Type: application/json' --data-binary "$2" \
        "$url/v1beta/models/m:$1?alt=sse"
}
gem_text() { # streamed response → the concatenated text parts (not thoughts)
    grep -v '"thought":true' <<<"$1" | grep -o '"parts":\[{"text":"[^"]*"' |
        sed 's/.*"text":"//; s/"$//' | tr -d '\n'
}
ctx='{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"}'
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":['"$ctx"',{"text":"Say hi"}]}]}')"
[ "$(gem_text "$r")" = "Hello! You said: Say hi" ] || fail "gemini echo: '$(gem_text "$r")'"
expect "$r" '"finishReason":"STOP"' "gemini finish"
expect "$r" '"usageMetadata":{"promptTokenCount":' "gemini usage"
[ "$(grep -c '^data: ' <<<"$r")" -eq 3 ] || fail "gemini: want 3 frames"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[shell:echo ok]]"}]}]}')"
expect "$r" '"functionCall":{"name":"run_shell_command","args":{"command":"echo ok"}}' "gemini shell call"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[shell:echo ok]]"}]},
  {"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},
  {"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: ok\nProcess Group PGID: 1\n</untrusted_context>"}}}]}]}')"
[ "$(gem_text "$r")" = "Tool output: ok" ] || fail "gemini tool output: '$(gem_text "$r")'"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[write:a.txt]]"}]}]}')"
expect "$r" '"name":"write_file","args":{"file_path":"a.txt","content":' "gemini write"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[reasoning]] x"}]}]}')"
expect "$r" '"text":"**Thinking**\n\nThinking about: [[reasoning]] x","thought":true' "gemini thought"
expect "$r" '"thoughtsTokenCount":' "gemini thought tokens"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[large:5000]]"}]}]}')"
[ "$(grep -c '^data: ' <<<"$r")" -eq 5 ] || fail "gemini large: want 5 frames"
r="$(gem streamGenerateContent '{"contents":[{"role":"user","parts":[{"text":"[[failed:boom]]"}]}]}')"
expect "$r" 'data: {"error":{"code":500,"message":"stand-in: scripted failure: boom","status":"INTERNAL"}}' "gemini stream error"
r="$(gem generateContent '{"contents":[{"role":"user","parts":[{"text":"Is it the user?"}]}],
  "generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object",
  "properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["user","model"]}},
  "required":["reasoning","next_speaker"]}}}')"
expect "$r" '"text":"{\"reasoning\":\"\",\"next_speaker\":\"user\"}"' "gemini json mode"
r="$(gem generateContent '{"contents":[{"role":"user","parts":[{"text":"Say hi"}]}]}')"
expect "$r" '"parts":[{"text":"Hello! You said: Say hi"}]' "gemini whole"
expect "$(gem countTokens '{"contents":[]}')" '{"totalTokens":' "gemini countTokens"
for st in 401:UNAUTHENTICATED 429:RESOURCE_EXHAUSTED 500:INTERNAL; do
    body="$(curl -sS -w ' %{http_code}' -X POST --data-binary \
        "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"[[http${st%%:*}]]\"}]}]}" \
        "$url/v1beta/models/m:streamGenerateContent?alt=sse")"
    expect "$body" "{\"error\":{\"code\":${st%%:*},\"message\":" "gemini http${st%%:*} body"
    expect "$body" "\"status\":\"${st#*:}\"}} ${st%%:*}" "gemini http${st%%:*} status"
done
code="$(curl -sS -o "$dir/ctx" -w '%{http_code}' -X POST --data-binary \
    '{"contents":[{"role":"user","parts":[{"text":"[[failed:context_length_exceeded]]"}]}]}' \
    "$url/v1beta/models/m:streamGenerateContent?alt=sse")"
[ "$code" = 400 ] || fail "gemini context overflow: got $code"
expect "$(cat "$dir/ctx")" '"status":"INVALID_ARGUMENT"' "gemini context overflow body"
code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST --data-binary '{}' "$url/v1beta/models/m:nothing")"
[ "$code" = 404 ] || fail "gemini unknown method: got $code"

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM: $(tail -n 20 "$dir/err")"
[ "$(wc -l <"$dir/log")" -eq 52 ] || fail "log: want 52 lines, got $(wc -l <"$dir/log")"
echo "smoke: ok"
