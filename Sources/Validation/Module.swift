// Signature validation (see SignatureValidator.swift).
