import { clearToken, readToken } from "./token";

/** A failed API call, with the gateway's error code (`UNAUTHORIZED`, `SESSION_NOT_FOUND`, …). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Listener = () => void;
const signedOut = new Set<Listener>();

/** Called when the gateway refuses the token: the app goes back to sign-in. */
export function onSignedOut(listener: Listener): () => void {
  signedOut.add(listener);
  return () => signedOut.delete(listener);
}

export async function request(path: string, init: RequestInit = {}, token = readToken()): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  const response = await fetch(path, { ...init, headers });
  if (response.ok) return response;
  let code = "HTTP_ERROR";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {
    // Not JSON: keep the status line.
  }
  if (response.status === 401 && token === readToken()) {
    clearToken();
    for (const listener of signedOut) listener();
  }
  throw new ApiError(response.status, code, message);
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request(path)).json()) as T;
}

export async function postJson<T>(path: string, body?: unknown): Promise<T> {
  const response = await request(path, {
    method: "POST",
    ...(body !== undefined
      ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
      : {}),
  });
  return (await response.json()) as T;
}

export async function deleteJson<T>(path: string): Promise<T> {
  return (await (await request(path, { method: "DELETE" })).json()) as T;
}

/** `/api/sessions/<key>` with the key escaped as one path segment. */
export function sessionPath(key: string, rest = ""): string {
  return `/api/sessions/${encodeURIComponent(key)}${rest}`;
}
