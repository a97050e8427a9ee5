// Preloaded into every Node process of this project (NODE_OPTIONS `--require`, scripts/env.py); it matters in the
// jsii runtime, the Node process every synthesis talks to.
//
// A cdktf provider package's lib/index.js requires every one of its submodules when it is loaded
// (`exports.vpc = require("./vpc");`, 2,135 of them for aws, 177 MB of JavaScript), and the jsii runtime loads it
// whole when Python imports the bindings: ~3.5 of the ~5 CPU-seconds its process spends in a synthesis. Here each
// such line becomes a getter that requires its submodule on first use, which is how the jsii runtime reaches a type
// anyway (`<package>.<submodule>.<Type>`, a property read per name): a synthesis loads the ~40 it uses. What changes
// is when a submodule loads, not what it holds: each getter hands out the module `require` gives
// (tests/test_lazy_providers.py).
//
// Only a provider binding's index (a package `@cdktf/provider-<name>` that ships a jsii assembly, `.jsii`) is
// rewritten, and only its `exports.<name> = require("./<path>");` lines; anything else loads as it is. Without
// `module.registerHooks` (Node older than 22.15; the project pins 22.23), nothing changes either. The jsii runtime
// loads a binding from a node_modules of its own that links to its package cache (and keeps the link's path:
// `--preserve-symlinks`); the cache's own path, `@cdktf/provider-<name>/<version>/<hash>/lib/index.js`, matches too.
//
// LAZY_PROVIDERS_LOG=<file>: each index rewritten is appended to it, a line each (tests/test_lazy_providers.py runs
// a real synthesis with it: the proof that the jsii runtime's own loading went through here).
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { fileURLToPath } = require("node:url");
const { registerHooks } = require("node:module");

const INDEX = /\/@cdktf\/provider-[a-z0-9-]+\/(?:[^/]+\/)*lib\/index\.js$/;
const LOG = process.env.LAZY_PROVIDERS_LOG;
const EAGER = /^exports\.([A-Za-z_$][\w$]*) = require\(("\.\/[^"\\]+")\);$/gm;

function lazy(source) {
  return source.replace(
    EAGER,
    (_, name, submodule) =>
      `Object.defineProperty(exports, "${name}", { enumerable: true, configurable: true, get() {` +
      ` const value = require(${submodule});` +
      ` Object.defineProperty(exports, "${name}", { value, enumerable: true, writable: true, configurable: true });` +
      ` return value; } });`,
  );
}

function isProviderBinding(url) {
  if (!url.startsWith("file:") || !INDEX.test(url)) return false;
  return fs.existsSync(path.join(path.dirname(path.dirname(fileURLToPath(url))), ".jsii"));
}

if (typeof registerHooks === "function") {
  registerHooks({
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      // No source (a loader that leaves it to Node's own CommonJS read): nothing to rewrite, so it loads as it is.
      if (loaded.source == null || !isProviderBinding(url)) return loaded;
      if (LOG) fs.appendFileSync(LOG, `${url}\n`);
      return { ...loaded, source: lazy(String(loaded.source)) };
    },
  });
}

module.exports = { lazy };
