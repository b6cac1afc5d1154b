// Copyright (C) 2018 Valerie Young. All rights reserved.
// This code is governed by the BSD license found in the LICENSE file.

export * as productionNS2 from './get-nested-namespace-dflt-skip-prod-end_FIXTURE.js';
