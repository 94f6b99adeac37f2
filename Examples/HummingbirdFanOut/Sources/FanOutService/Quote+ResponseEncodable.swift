import Hummingbird

// A handler can return a quote: Hummingbird encodes it as JSON.
extension Quote: ResponseEncodable {}
