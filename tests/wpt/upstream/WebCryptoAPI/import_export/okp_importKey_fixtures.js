var keyData = okpKeyData;
