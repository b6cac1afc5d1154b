// Copyright (C) 2016 Valerie Young. All rights reserved.
// This code is governed by the BSD license found in the LICENSE file.

export var indirectIdName;
export var starAsIndirectIdName;
