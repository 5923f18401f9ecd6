import { useCallback, useEffect, useState } from "preact/hooks";
import { deleteJson, getJson, postJson, sessionPath } from "../api";
import { absoluteTime } from "../format";

interface ShareLink {
  id: string;
  url: string;
  headSeq: number;
  createdAt: number;
}

/**
 * The session's share links: Share makes one (the conversation as it is now, read-only, to anyone with the
 * link), each can be copied and revoked. Revoking takes effect on every gateway of the store at once.
 */
export function ShareLinks({ sessionKey }: { sessionKey: string }) {
  const [links, setLinks] = useState<ShareLink[]>([]);
  const [status, setStatus] = useState("");
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    const { shares } = await getJson<{ shares: ShareLink[] }>(sessionPath(sessionKey, "/shares"));
    setLinks(shares);
  }, [sessionKey]);

  useEffect(() => {
    load().catch((caught: Error) => setStatus(`Share links could not be read: ${caught.message}`));
  }, [load]);

  const run = async (action: () => Promise<string>, failed: string) => {
    setBusy(true);
    try {
      setStatus(await action());
    } catch (caught) {
      setStatus(`${failed}: ${(caught as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const share = () =>
    run(async () => {
      const link = await postJson<ShareLink>(sessionPath(sessionKey, "/share"));
      await load();
      return `Link made: it shows the conversation up to entry ${link.headSeq}, not what comes later.`;
    }, "Sharing failed");
  const copy = (link: ShareLink) =>
    run(async () => {
      await navigator.clipboard.writeText(link.url);
      return "Link copied.";
    }, "Copying failed (select the link and copy it)");
  const revoke = (link: ShareLink) =>
    run(async () => {
      await deleteJson(`/api/shares/${encodeURIComponent(link.id)}`);
      await load();
      return "Link revoked: it no longer opens.";
    }, "Revoking failed");

  return (
    <section class="card share-links" aria-labelledby="share-links-title">
      <div class="share-links-head">
        <h2 id="share-links-title">Share links</h2>
        <button type="button" disabled={busy} onClick={() => void share()}>
          Share
        </button>
      </div>
      <p class="muted">
        Anyone with a link reads this conversation as it is when the link is made: user and assistant text
        only, secrets redacted, no tools or notes. Later messages are not shown.
      </p>
      {links.length > 0 && (
        <ul class="plain share-list" aria-label="Share links">
          {links.map((link) => (
            <li key={link.id} data-share={link.id}>
              <a href={link.url} target="_blank" rel="noreferrer noopener" class="break share-url">
                {link.url}
              </a>
              <span class="muted">
                up to entry {link.headSeq}, {absoluteTime(link.createdAt)}
              </span>
              <span class="share-actions">
                <button type="button" class="ghost" disabled={busy} onClick={() => void copy(link)}>
                  Copy link
                </button>
                <button type="button" class="danger" disabled={busy} onClick={() => void revoke(link)}>
                  Revoke
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <p class="status-line" role="status" aria-label="Share status">
        {status}
      </p>
    </section>
  );
}
