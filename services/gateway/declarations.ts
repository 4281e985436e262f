/**
 * Every declared HTTP endpoint, in the order of the gateway's routes. The
 * gateway imports each service's declarations (its folder's endpoints.ts:
 * static data, loaded without the service) rather than reading them from the
 * registry: in a split deployment the gateway then has every route from its
 * first request, whatever nodes are up, and the zod schemas (which do not
 * survive the JSON of Moleculer's INFO packets) stay usable for the OpenAPI
 * document.
 */
import type { Permission } from "../../shared/domain/permissions";
import type { ApiKeyScope } from "../../shared/domain/api-key-scopes";
import { routesOf, type ActionDeclaration, type HttpEndpoint, type InputSchema, type RouteGroup } from "../../shared/endpoint";
import { ACCOUNTS } from "../accounts/endpoints";
import { ATTRIBUTION } from "../attribution/endpoints";
import { COMMISSIONS } from "../commissions/endpoints";
import { NOTIFICATIONS } from "../notifications/endpoints";
import { PORTAL } from "../portal/endpoints";
import { PROCESSOR } from "../processor/endpoints";
import { PROGRAMS } from "../programs/endpoints";
import { REWARDS } from "../rewards/endpoints";
import { SALES } from "../sales/endpoints";
import { STATUS } from "../status/endpoints";
import { GATEWAY, GATEWAY_PAGES } from "./endpoints";
import { EmbedPageParams } from "./path-params";

export type PageName = keyof typeof GATEWAY_PAGES;

/** One HTTP route: an action's endpoint (with the action's input schema), or a page of the gateway. */
export type DeclaredEndpoint = { http: HttpEndpoint } & ({ action: string; input?: InputSchema; page?: undefined } | { action: null; page: PageName; input?: InputSchema });

/** The path parameters of the pages that have some (the page parses them itself), for the document. */
const PAGE_INPUTS: Partial<Record<PageName, InputSchema>> = { embedReferrals: EmbedPageParams };

/** The order of the gateway's routes (moleculer-web matches them in this order). */
export const ROUTE_ORDER: RouteGroup[] = [
  "health",
  "reference",
  "track-browser",
  "track-server",
  "processor-webhooks",
  "auth",
  "tracking-status",
  "workspace-notifications",
  "program-dashboard",
  "dashboard",
  "assets",
  "icon",
  "sdk",
  "admin",
  "partner",
  "portal",
  "embed",
  "email-links",
  "applications",
  // Last: its prefix (/api/v1) is also the tracking and processor webhook routes'.
  "program-api",
];

// In this order within a route group (the document lists operations in this order too).
const SERVICES: Array<{ service: string; actions: Record<string, ActionDeclaration> }> = [
  GATEWAY,
  ATTRIBUTION,
  STATUS,
  PROGRAMS,
  REWARDS,
  SALES,
  COMMISSIONS,
  PROCESSOR,
  NOTIFICATIONS,
  ACCOUNTS,
  PORTAL,
];

function collect(): DeclaredEndpoint[] {
  const all: DeclaredEndpoint[] = [];
  for (const { service, actions } of SERVICES) {
    for (const [name, declaration] of Object.entries(actions)) {
      for (const http of routesOf(declaration)) all.push({ action: `${service}.${name}`, input: declaration.input, http });
    }
  }
  for (const [page, routes] of Object.entries(GATEWAY_PAGES) as Array<[PageName, HttpEndpoint | HttpEndpoint[]]>) {
    for (const http of [routes].flat()) all.push({ action: null, page, http, input: PAGE_INPUTS[page] });
  }
  // Stable sort: by route group, then in declaration order.
  return all.sort((a, b) => ROUTE_ORDER.indexOf(a.http.route) - ROUTE_ORDER.indexOf(b.http.route));
}

export const ENDPOINTS: readonly DeclaredEndpoint[] = collect();

/**
 * The permission a session route needs beyond its route group's default (HttpEndpoint.permission), keyed
 * "METHOD /full/path" as moleculer-web's alias knows it: per route, since one action may answer several routes.
 */
export const ROUTE_PERMISSIONS: ReadonlyMap<string, Permission> = new Map(
  ENDPOINTS.flatMap((e) => (e.action && e.http.permission ? [[`${e.http.method} ${e.http.path}`, e.http.permission] as const] : [])),
);

/** The scope an API key needs on each program-api route, keyed "METHOD /full/path". */
export const ROUTE_SCOPES: ReadonlyMap<string, ApiKeyScope> = new Map(
  ENDPOINTS.flatMap((e) => (e.action && e.http.scope ? [[`${e.http.method} ${e.http.path}`, e.http.scope] as const] : [])),
);
