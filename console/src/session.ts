/**
 * Sign-in is an API key kept in sessionStorage (issue 17): it lives as long as the tab, is never sent
 * anywhere but flowlog's own origin, and nothing else is stored in the browser. The workspace lives in the
 * URL, so a shared link opens the same view for anyone whose key may see it.
 */
const keyName = "flowlog.apiKey";

export function storedApiKey(): string | undefined {
  return sessionStorage.getItem(keyName) ?? undefined;
}

export function storeApiKey(key: string): void {
  sessionStorage.setItem(keyName, key);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(keyName);
}
