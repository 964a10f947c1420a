#!/usr/bin/env node
// Decide many IAM requests with @cloud-copilot/iam-simulate in ONE node process: the
// independent evaluator tests/harness/iam/test_differential.py compares the harness's with.
//
//   node decide.cjs INSTALL_DIR < {"cases": [{"principal", "action", "resource", "account",
//                                  "context", "identity": [documents], "resource_policy"}]}
//   stdout: {"decisions": [{"result": "Allowed|ExplicitlyDenied|ImplicitlyDenied|error",
//                           "errors": ...}]}, one per case, in order.
//
// INSTALL_DIR holds node_modules/@cloud-copilot/iam-simulate (scripts/bootstrap.sh installs
// it with npm ci from this directory's package-lock.json). "error" is the simulator
// refusing the request as invalid (an action or ARN format it does not know).
"use strict";

const path = require("path");

const [installDir] = process.argv.slice(2);
if (!installDir) {
  process.stderr.write("usage: node decide.cjs INSTALL_DIR < cases.json\n");
  process.exit(2);
}
const { runSimulation } = require(
  require.resolve("@cloud-copilot/iam-simulate", { paths: [path.resolve(installDir)] }),
);

async function decide(item) {
  const simulation = {
    request: {
      principal: item.principal,
      action: item.action,
      resource: { resource: item.resource, accountId: item.account },
      contextVariables: item.context,
    },
    identityPolicies: item.identity.map((policy, index) => ({ name: `p${index}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: item.resource_policy ?? undefined,
  };
  const response = await runSimulation(simulation, {});
  if (response.resultType === "error") {
    return { result: "error", errors: response.errors };
  }
  return { result: response.overallResult };
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { cases } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const decisions = [];
  for (const item of cases) decisions.push(await decide(item));
  process.stdout.write(JSON.stringify({ decisions }));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
