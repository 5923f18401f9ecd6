const KEY = "sessiond.token";

/** The access token lives in this tab's sessionStorage only: closing the tab signs out. */
export function readToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
