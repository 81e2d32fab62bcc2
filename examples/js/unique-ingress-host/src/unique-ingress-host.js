// Example admission plugin `unique-ingress-host`, a policy that reads the
// server's own cache: an Ingress may not claim a host that another Ingress,
// in any namespace, already has. On every create or update of an Ingress it
// lists the cluster's Ingresses through the host import `list-objects`
// (served from the server's watch cache, so it sees an Ingress created a
// moment before) and refuses the first host already taken, naming the
// Ingress that holds it. The same policy as examples/rust/unique-ingress-host.

import { Level, allow, forbidden, listObjects, log, object, objectName, writtenObject } from '@capstan/plugin-sdk';

/** The non-empty hosts of an Ingress's rules, in order. */
function hosts(ingress) {
  const rules = Array.isArray(ingress?.spec?.rules) ? ingress.spec.rules : [];
  return rules.map((rule) => rule?.host).filter((host) => typeof host === 'string' && host !== '');
}

/** @param {import('@capstan/plugin-sdk').AdmissionRequest} request */
export function review(request) {
  const ingress = writtenObject(request, 'networking.k8s.io', 'ingresses');
  if (!ingress) return allow();
  const wanted = hosts(ingress);
  if (wanted.length === 0) return allow();
  const others = listObjects('networking.k8s.io/v1', 'ingresses');
  const namespace = request.namespace ?? '';
  const name = objectName(request);
  const isMe = (other) => object.namespace(other) === namespace && object.name(other) === name;
  for (const host of wanted) {
    const holder = others.find((other) => !isMe(other) && hosts(other).includes(host));
    if (holder) {
      const heldBy = `${object.namespace(holder)}/${object.name(holder)}`;
      log(Level.Info, `host ${host} is held by ${heldBy}`);
      return forbidden(request, `host "${host}" is already used by ingress ${heldBy}`);
    }
  }
  return allow();
}
