// The sign-in token lives in this browser's localStorage, never in a URL or the page.
const KEY = "service.token";

export function storedToken(): string | null {
  return localStorage.getItem(KEY);
}

export function storeToken(token: string): void {
  localStorage.setItem(KEY, token.trim());
}

export function forgetToken(): void {
  localStorage.removeItem(KEY);
}

/**
 * `/login?token=...` (or `/login#token=...`): keeps the token and takes it out of the address
 * bar and the history at once, so it is not bookmarked, shared or shown again.
 */
export function takeTokenFromUrl(): boolean {
  if (location.pathname !== "/login") return false;
  const fromQuery = new URLSearchParams(location.search).get("token");
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  const token = (fromQuery ?? fromHash ?? "").trim();
  history.replaceState(null, "", "/");
  if (!token) return false;
  storeToken(token);
  return true;
}
