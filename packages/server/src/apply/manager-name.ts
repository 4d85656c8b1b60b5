/**
 * Field manager names (apimachinery's `ValidateFieldManager` and the handlers'
 * `managerOrUserAgent`): every write checks the name it is recorded under.
 */
import { fieldErrors, type StatusCause } from 'kubeloop/api';

/** Longest `fieldManager` (`FieldManagerMaxLength`). */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Problems of a `fieldManager` (`ValidateFieldManager`): too long, or not printable. */
export function fieldManagerCauses(fieldManager: string, field = 'fieldManager'): StatusCause[] {
  // Printable ASCII (the usual name) is one byte a character, all printable: only the length counts.
  if (isPrintableAscii(fieldManager))
    return fieldManager.length > FIELD_MANAGER_MAX_LENGTH
      ? [fieldErrors.tooLong(field, FIELD_MANAGER_MAX_LENGTH)]
      : [];
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH) {
    causes.push(fieldErrors.tooLong(field, FIELD_MANAGER_MAX_LENGTH));
  }
  let i = 0;
  for (const ch of fieldManager) {
    const cp = ch.codePointAt(0)!;
    if (!isPrintable(cp)) {
      const hex = cp.toString(16).toUpperCase().padStart(4, '0');
      causes.push(fieldErrors.invalid(field, fieldManager, `invalid character U+${hex} (at position ${i})`));
    }
    i += Buffer.byteLength(ch);
  }
  return causes;
}

/** Whether every character of `s` is printable ASCII (U+0020–U+007E), all of which `unicode.IsPrint` accepts. */
function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(cp: number): boolean {
  if (cp === 0x20) return true;
  return /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(String.fromCodePoint(cp));
}

/**
 * `managerOrUserAgent`: the request's `fieldManager`, else its User-Agent up to the first `/`,
 * without unprintable characters and cut at 128 bytes (`kubectl/v1.32.0 (linux/amd64)` → `kubectl`).
 */
export function managerOrUserAgent(
  fieldManager: string | null | undefined,
  userAgent: string | undefined,
): string {
  if (fieldManager) return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  // Printable ASCII (kubectl's, client-go's): nothing to drop, one byte a character.
  if (isPrintableAscii(prefix)) return prefix.slice(0, FIELD_MANAGER_MAX_LENGTH);
  let out = '';
  for (const ch of prefix) {
    if (!isPrintable(ch.codePointAt(0)!)) continue;
    if (Buffer.byteLength(out + ch) > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}
