/**
 * Warnings moleculer-web gives for a misuse of its conventions (a 201 without `ctx.meta.$location`), collected from
 * every system a test file starts (test/support/system.ts) and checked after the file's tests
 * (jest.config.js's setupFilesAfterEnv): a file whose system logged one fails.
 */
const FRAMEWORK_WARNING = /ctx\.meta\.\$location/;

export const frameworkWarnings: string[] = [];

/** A log line of a system under test: kept when it is one of those warnings. */
export function noteLogLine(line: string): void {
  if (FRAMEWORK_WARNING.test(line)) frameworkWarnings.push(line);
}
