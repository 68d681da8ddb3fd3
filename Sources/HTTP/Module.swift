// The libcurl client lives here (see HTTPClient.swift).
