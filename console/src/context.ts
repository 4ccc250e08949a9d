import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Api } from "./api.js";

/** What every signed-in page works with: the clients, the workspace in the URL, and a way out. */
export interface Session {
  api: Api;
  workspaceId: string;
  signOut(): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in page");
  return session;
}
