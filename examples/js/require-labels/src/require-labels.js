// Admission policy `require-labels`: rejects creates and updates of
// objects that lack any of the labels listed in its configuration,
// `{"labels": ["team"]}`. Subresources (status, scale...) and deletes are
// not checked.

import { Level, allow, config, forbidden, log, object, writtenObject } from '@capstan/plugin-sdk';

/** The plugin's configuration: `{labels: string[]}`, nothing else. */
function readConfig() {
  const cfg = config();
  const unknown = Object.keys(cfg).filter((k) => k !== 'labels');
  if (unknown.length > 0) throw new Error(`invalid plugin configuration: unknown field ${JSON.stringify(unknown[0])}, expected \`labels\``);
  const labels = cfg.labels ?? [];
  if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) {
    throw new Error('invalid plugin configuration: `labels` must be a list of strings');
  }
  return labels;
}

/** @param {import('@capstan/plugin-sdk').AdmissionRequest} request */
export function review(request) {
  const obj = writtenObject(request);
  if (!obj) return allow();
  const present = object.labels(obj);
  const missing = readConfig().filter((key) => !(key in present));
  if (missing.length === 0) return allow();
  log(Level.Info, `rejecting ${object.name(obj)}: missing ${JSON.stringify(missing)}`);
  return forbidden(request, `missing required label(s): ${missing.join(', ')}`);
}
