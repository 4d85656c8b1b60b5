/** Every check of the 1.32 Pod Security Standards, baseline then restricted. */
import { BASELINE_CHECKS } from './checks-baseline.js';
import { RESTRICTED_CHECKS } from './checks-restricted.js';
import type { Check } from './policy.js';

/** Every check of the 1.32 Pod Security Standards. */
export const DEFAULT_CHECKS: readonly Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS];
