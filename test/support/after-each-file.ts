/** Checks after every test file (jest.config.js's setupFilesAfterEnv). */
import { frameworkWarnings } from "./framework-warnings";

afterAll(() => {
  expect({ "moleculer-web warnings": frameworkWarnings }).toEqual({ "moleculer-web warnings": [] });
});
