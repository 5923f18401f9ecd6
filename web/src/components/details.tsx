import { useState } from "preact/hooks";
import { deleteJson, postJson, sessionPath } from "../api";
import { absoluteTime, count, relativeTime, usd } from "../format";
import { useAgents } from "../hooks";
import type { RuntimeSession, SessionDetail } from "../types";
import { AgentName, isConfigured, UNCONFIGURED_HINT } from "./agent-name";

/** The session's facts: ids, each agent's runtime session, work sessions, overrides, counts, tokens and cost. */
export function Details({ detail, onChanged }: { detail: SessionDetail; onChanged?: () => void }) {
  const { session } = detail;
  const overrides = Object.entries(session.overrides);
  const configured = useAgents();
  const agents = [session.agent, ...(detail.runtimeSessions ?? []).map((r) => r.agent)].filter(
    (agent, i, all) => all.indexOf(agent) === i,
  );
  const unconfigured = isConfigured(configured, session.agent) === false;
  return (
    <aside class="card details" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <dl>
        <dt>Key</dt>
        <dd class="break">{session.key}</dd>
        <dt>Agent</dt>
        <dd>
          <AgentName agent={session.agent} agents={configured} />
          {unconfigured && (
            <p class="muted" data-testid="agent-unconfigured-hint">
              {UNCONFIGURED_HINT}
            </p>
          )}
        </dd>
        <dt>Channel</dt>
        <dd>
          {session.channel}
          {session.chatType ? ` (${session.chatType})` : ""}
        </dd>
        <dt>Created by</dt>
        <dd class="break">{session.createdBy}</dd>
        <dt>Generation</dt>
        <dd data-testid="generation">{session.generation}</dd>
        <dt>Created</dt>
        <dd title={absoluteTime(session.createdAt)}>{relativeTime(session.createdAt)}</dd>
        <dt>Last activity</dt>
        <dd title={absoluteTime(session.lastActivityAt)}>{relativeTime(session.lastActivityAt)}</dd>
        <dt>Entries</dt>
        <dd>{count(session.entryCount)}</dd>
        <dt>Messages</dt>
        <dd data-testid="messages">{count(session.messageCount)}</dd>
        <dt>Tokens (est.)</dt>
        <dd>{count(session.approxTokens)}</dd>
        <dt>Context from</dt>
        <dd>#{session.contextFromSeq}</dd>
        <dt>Queued turns</dt>
        <dd>{detail.queued}</dd>
        <dt>Cost</dt>
        <dd>
          {detail.cost
            ? `${usd(detail.cost.usd)} (${detail.cost.pricedRuns} priced, ${detail.cost.unpricedRuns} unpriced${
                detail.cost.ambiguousRuns > 0 ? `, ${detail.cost.ambiguousRuns} ambiguous` : ""
              }${notMeasured(detail.cost.notMeasuredRuns ?? 0)})`
            : "—"}
        </dd>
      </dl>
      <h3>Runtime sessions</h3>
      <ul class="plain">
        {agents.map((agent) => (
          <li key={agent}>
            <span class="muted">{agent}: </span>
            <RuntimeId entry={detail.runtimeSessions?.find((r) => r.agent === agent)} />
          </li>
        ))}
      </ul>
      <WorkSessions
        detail={detail}
        agents={agents.filter((agent) => isConfigured(configured, agent) !== false)}
        onChanged={onChanged}
      />
      <h3>Overrides</h3>
      {overrides.length === 0 ? (
        <p class="muted">None: everything is inherited.</p>
      ) : (
        <dl>
          {overrides.map(([name, value]) => (
            <>
              <dt key={`k-${name}`}>
                <code>{name}</code>
              </dt>
              <dd key={`v-${name}`}>{String(value)}</dd>
            </>
          ))}
        </dl>
      )}
    </aside>
  );
}

function RuntimeId({ entry }: { entry: RuntimeSession | undefined }) {
  if (!entry) return <span class="muted">No session here yet</span>;
  return (
    <>
      <code title={`${entry.runtime} ${entry.id} (saved ${absoluteTime(entry.savedAt)})`}>
        {entry.shortId}
      </code>
      <span class="sr-only"> (full id {entry.id})</span>
    </>
  );
}

/** LoCrew's words for the first run seen on a session that already existed. */
function notMeasured(runs: number): string {
  if (runs === 0) return "";
  return runs === 1 ? ", 1 run: cost not measured" : `, ${runs} runs: cost not measured`;
}

/** LoCrew's work sessions: who may write without asking here, until when; start (30 min) or end one. */
function WorkSessions({
  detail,
  agents,
  onChanged,
}: {
  detail: SessionDetail;
  agents: string[];
  onChanged: (() => void) | undefined;
}) {
  const [error, setError] = useState("");
  const path = sessionPath(detail.session.key, "/work-session");
  const running = detail.workSessions ?? [];
  const act = (work: () => Promise<unknown>) =>
    work().then(
      () => {
        setError("");
        onChanged?.();
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  return (
    <>
      <h3>Work sessions</h3>
      <ul class="plain" data-testid="work-sessions">
        {agents.map((agent) => {
          const work = running.find((w) => w.agent === agent);
          return (
            <li key={agent}>
              <span class="muted">{agent}: </span>
              {work ? (
                <>
                  <span>may write without asking until {absoluteTime(work.until)} </span>
                  <button
                    type="button"
                    class="ghost"
                    onClick={() => act(() => deleteJson(`${path}?agent=${encodeURIComponent(agent)}`))}
                  >
                    End work session
                  </button>
                </>
              ) : (
                <button type="button" class="ghost" onClick={() => act(() => postJson(path, { agent }))}>
                  Start a 30-minute work session
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
