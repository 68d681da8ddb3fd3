// Signing sessions and signers (see SigningSession.swift).
