/**
 * Workspace roles and what they may do. A dashboard user's access to a program
 * is the permission set of their role in the program's workspace.
 */
export const PERMISSIONS = ["tracking:read", "programs:read", "programs:write", "payouts:write", "members:write"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLE_PERMISSIONS = {
  owner: [...PERMISSIONS],
  admin: ["tracking:read", "programs:read", "programs:write", "payouts:write"],
  developer: ["tracking:read", "programs:read"],
  viewer: ["tracking:read", "programs:read"],
  // Finance staff: payouts without the integration details.
  billing: ["programs:read", "payouts:write"],
} as const satisfies Record<string, readonly Permission[]>;

export type Role = keyof typeof ROLE_PERMISSIONS;
export const ROLES = Object.keys(ROLE_PERMISSIONS) as Role[];

export function roleAllows(role: Role, permission: Permission): boolean {
  return (ROLE_PERMISSIONS[role] as readonly Permission[]).includes(permission);
}
