#!/usr/bin/env node
// Validate many Amazon States Language definitions with asl-validator in ONE node process.
//
//   node validate.cjs INSTALL_DIR [--fresh] < {"definitions": [{"id": "...", "definition": "<json text>"}]}
//   stdout: [{"id": "...", "valid": true|false, "errors": [{"code": "...", "message": "..."}]}]
//
// INSTALL_DIR holds node_modules/asl-validator (scripts/bootstrap.sh installs it with
// npm ci from this directory's package-lock.json). The checks are asl-validator's own,
// with its defaults (path and ARN checks on), as its CLI and the Serverless Framework's
// Step Functions plugin run them.
//
// asl-validator builds a new Ajv and compiles every ASL schema on each call: 0.15 to
// 0.8 CPU-seconds per definition. Here the first Ajv is kept and later calls get a view
// of it whose schema and format registrations are no-ops (the schemas and formats are
// the same ones, registered by the same code with the same options), so a definition
// after the first costs about a millisecond. --fresh turns this off; a test checks that
// both give the same errors.
"use strict";

const fs = require("fs");
const path = require("path");

const [installDir, ...flags] = process.argv.slice(2);
if (!installDir) {
  process.stderr.write("usage: node validate.cjs INSTALL_DIR [--fresh] < definitions.json\n");
  process.exit(2);
}
const main = require.resolve("asl-validator", { paths: [path.resolve(installDir)] });

if (!flags.includes("--fresh")) {
  const ajvModule = require(require.resolve("ajv", { paths: [path.dirname(main)] }));
  const RealAjv = ajvModule.default;
  let shared = null;
  ajvModule.default = function SharedAjv(options) {
    if (shared === null) {
      shared = new RealAjv(options);
      return shared;
    }
    const view = Object.create(shared); // validate() sets view.errors, not shared's
    view.addSchema = view.addFormat = view.addKeyword = function () {
      return this;
    };
    return view;
  };
}
const validator = require(main);

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const results = input.definitions.map(({ id, definition }) => {
  let parsed;
  try {
    parsed = JSON.parse(definition);
  } catch (error) {
    return { id, valid: false, errors: [{ code: "INVALID_JSON", message: String(error.message) }] };
  }
  const result = validator(parsed);
  const errors = result.errors.map((e) => ({ code: e["Error code"], message: e.Message }));
  return { id, valid: result.isValid, errors };
});
process.stdout.write(JSON.stringify(results));
