/** PostgreSQL's unique_violation: the database refused a duplicate. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === "23505";
}
