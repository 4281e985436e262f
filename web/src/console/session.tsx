/**
 * Who is signed in and which program the console shows: the session from /api/auth/me, the programs of the
 * user's workspaces, the chosen program's settings (name, currency) and what the user's role allows there.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { roleAllows, type Permission, type Role } from "../../../shared/domain/permissions";

export interface Me {
  user: { id: number; email: string; name: string | null };
  workspaces: Array<{ workspaceId: number; role: Role }>;
}

export interface ProgramChoice {
  id: number;
  name: string;
  workspaceId: number;
  role: Role;
}

export interface ProgramSettings {
  programId: number;
  name: string;
  currency: string;
  currencyFixed: boolean;
  cookieWindowDays: number;
  holdDays: number;
  defaultLandingUrl: string | null;
  /** The brand on the embedded referrals page: #rrggbb and a logo URL, or null. */
  brandColor: string | null;
  logoUrl: string | null;
  allowedOrigins: string[];
  applications: ApplicationSettings;
}

/** Whether and how people apply to the program on its public page (/portal/apply?program=ID). */
export interface ApplicationSettings {
  open: boolean;
  autoApprove: boolean;
  /** The group automatic approvals join; null for the default group. */
  autoApproveGroupId: number | null;
  description: string;
  questions: string[];
  terms: string;
}

/** The address of the program's public application page. */
export const applyPageUrl = (programId: number): string => `${location.origin}/portal/apply?program=${programId}`;

export interface ConsoleContext {
  me: Me;
  program: ProgramChoice;
  settings: ProgramSettings;
  /** Loads the settings again (after the Settings screen saved them). */
  reloadSettings: () => void;
}

export const Console = createContext<ConsoleContext | null>(null);

/** The console's context; screens render only inside the shell, which provides it. */
export function useConsole(): ConsoleContext & { can: (permission: Permission) => boolean; programPath: (rest?: string) => string } {
  const context = useContext(Console);
  if (!context) throw new Error("useConsole outside the console shell");
  return {
    ...context,
    can: (permission) => roleAllows(context.program.role, permission),
    programPath: (rest = "") => `/api/programs/${context.program.id}${rest}`,
  };
}

/** A console URL for `screen` that keeps the chosen program. */
export const screenHref = (screen: string, programId: number): string => `/dashboard${screen}?program=${programId}`;

/** A partner's screen (the id is in the query: the console's page routes carry no ids of their own). */
export const partnerHref = (partnerId: number, programId: number): string => `/dashboard/partner?program=${programId}&partner=${partnerId}`;
