// The response half of an AdmissionReview and its builders: allow, deny
// with a metav1.Status, JSON patches, warnings and audit annotations.
// `forbidden` and `notFound` word their messages exactly as
// kube-apiserver's `admission.NewForbidden` / `apierrors.NewNotFound` do
// (and as the Rust SDK, plugin-sdk/src/response.rs, does).

import { encodeText } from './base64.js';
import { diff } from './patch.js';
import { groupResource, objectName } from './review.js';

/** `AdmissionReview.response`; `uid` is filled in by `runAdmission`. */
export class AdmissionResponse {
  constructor(allowed, status) {
    this.allowed = allowed;
    this.status = status;
    this.patchOps = [];
    this.warnings = [];
    this.auditAnnotations = {};
  }

  /** Admits the request unchanged. */
  static allow() {
    return new AdmissionResponse(true, undefined);
  }

  /**
   * Rejects the request with a Failure status (`code` e.g. 403, `reason`
   * e.g. "Forbidden"); `message` is what kubectl prints after "Error from server".
   */
  static deny(code, reason, message) {
    return new AdmissionResponse(false, { status: 'Failure', message, reason, code });
  }

  /** kube's `admission.NewForbidden(a, err)`: 403, `<resource> "<name>" is forbidden: <message>`. */
  static forbidden(request, message) {
    const name = objectName(request);
    const r = request.resource ?? {};
    const text = `${groupResource(r.group ?? '', r.resource ?? '')} "${name}" is forbidden: ${message}`;
    return AdmissionResponse.deny(403, 'Forbidden', text).withDetails({
      name,
      group: r.group ?? '',
      kind: r.resource ?? '',
    });
  }

  /** kube's `apierrors.NewNotFound`: 404, `<resource> "<name>" not found`. */
  static notFound(group, resource, name) {
    const text = `${groupResource(group, resource)} "${name}" not found`;
    return AdmissionResponse.deny(404, 'NotFound', text).withDetails({ name, group, kind: resource });
  }

  /** Sets `status.details` (no effect on an allowed response without status). */
  withDetails(details) {
    if (this.status) this.status.details = { ...details };
    return this;
  }

  /** Adds a cause to `status.details.causes`. */
  withCause(type, field, message) {
    if (this.status) {
      const details = (this.status.details ??= {});
      (details.causes ??= []).push({ reason: type, message, field });
    }
    return this;
  }

  /** Attaches JSON Patch operations (an array, or a `JsonPatch`); none leaves no patch. */
  withPatch(ops) {
    this.patchOps.push(...(Array.isArray(ops) ? ops : ops.ops));
    return this;
  }

  /** Attaches the JSON Patch that turns `before` into `after` (see `diff`). */
  withChanges(before, after) {
    return this.withPatch(diff(before, after));
  }

  /** Adds a warning (shown by kubectl as "Warning: ..."). */
  withWarning(warning) {
    this.warnings.push(warning);
    return this;
  }

  /** Adds an audit annotation. */
  withAuditAnnotation(key, value) {
    this.auditAnnotations[key] = value;
    return this;
  }

  /** The status message, "" when none (handy in tests). */
  get message() {
    return this.status?.message ?? '';
  }

  /** The status code, 0 when none. */
  get code() {
    return this.status?.code ?? 0;
  }

  /** The wire form: base64 JSON Patch with patchType "JSONPatch", empty fields left out. */
  toJSON() {
    const out = { uid: this.uid ?? '', allowed: this.allowed };
    if (this.status) out.status = this.status;
    if (this.patchOps.length > 0) {
      out.patch = encodeText(JSON.stringify(this.patchOps));
      out.patchType = 'JSONPatch';
    }
    if (Object.keys(this.auditAnnotations).length > 0) out.auditAnnotations = this.auditAnnotations;
    if (this.warnings.length > 0) out.warnings = this.warnings;
    return out;
  }
}
