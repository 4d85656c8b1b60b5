/** The authentication.k8s.io reviews, answered by the review machinery of `../authorization/reviews.ts`. */
import { reviewKind } from '../authorization/reviews.js';
import type { ResourceType } from '../types.js';

/** `TokenReview` (authentication.k8s.io/v1 `tokenreviews`): how the registry serves, validates and prints it. */
export const tokenReviewKind: ResourceType = reviewKind(
  'authentication.k8s.io',
  'tokenreviews',
  'TokenReview',
  false,
);

/** `SelfSubjectReview` (authentication.k8s.io/v1 `selfsubjectreviews`): how the registry serves, validates and prints it. */
export const selfSubjectReviewKind: ResourceType = reviewKind(
  'authentication.k8s.io',
  'selfsubjectreviews',
  'SelfSubjectReview',
  false,
);
