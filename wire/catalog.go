package wire

// Service is one entry of an adapter's catalog: a service id, its version and the
// methods it advertises.
type Service struct {
	ID      string   `json:"id"`
	Version int      `json:"version"`
	Methods []string `json:"methods"`
}

// Catalog is the value of the initialize result: the services an adapter provides.
// A catalog received from an adapter has been checked against every catalog rule of
// the protocol before it is handed out.
type Catalog struct {
	Protocol int       `json:"protocol"`
	Services []Service `json:"services"`
}

// Service returns the service with the given id.
func (c *Catalog) Service(id string) (Service, bool) {
	for _, s := range c.Services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}
