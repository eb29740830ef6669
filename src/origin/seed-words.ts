/**
 * Word lists the seeder draws believable titles and author names from. The lists are long enough
 * that a single content word matches a few hundred of 100,000 books, as in a real catalog, and
 * not tens of thousands (see the search-cost note in catalog-db.ts).
 */

export const ADJECTIVES = [
  'Silent', 'Hidden', 'Broken', 'Golden', 'Distant', 'Forgotten', 'Burning', 'Quiet', 'Crimson', 'Hollow',
  'Wandering', 'Frozen', 'Secret', 'Endless', 'Shattered', 'Restless', 'Lonely', 'Ancient', 'Bitter', 'Bright',
  'Careless', 'Certain', 'Cold', 'Common', 'Crooked', 'Dark', 'Dazzling', 'Deep', 'Drowned', 'Dusty',
  'Early', 'Electric', 'Empty', 'Faithful', 'Fallen', 'False', 'Fierce', 'Final', 'Fragile', 'Gentle',
  'Glass', 'Grand', 'Green', 'Grey', 'Happy', 'Heavy', 'High', 'Honest', 'Impossible', 'Invisible',
  'Iron', 'Last', 'Late', 'Little', 'Long', 'Lost', 'Lucky', 'Midnight', 'Modern', 'Narrow',
  'New', 'Northern', 'Old', 'Open', 'Painted', 'Pale', 'Perfect', 'Poor', 'Private', 'Quick',
  'Rare', 'Red', 'Royal', 'Salt', 'Savage', 'Scarlet', 'Second', 'Shining', 'Silver', 'Simple',
  'Sleeping', 'Small', 'Southern', 'Stolen', 'Strange', 'Sudden', 'Summer', 'Sweet', 'Tender', 'Thin',
  'Tired', 'True', 'Twisted', 'Unfinished', 'Vanishing', 'Velvet', 'Violent', 'Wild', 'Winter', 'Wise',
  'Wooden', 'Wounded', 'Yellow', 'Young', 'Amber', 'Autumn', 'Blind', 'Blue', 'Brave', 'Brief',
  'Clever', 'Copper', 'Curious', 'Dreaming', 'Eastern', 'Elegant', 'Emerald', 'Fading', 'Floating', 'Foolish',
  'Gilded', 'Glorious', 'Haunted', 'Hungry', 'Idle', 'Ivory', 'Jealous', 'Kind', 'Marble', 'Merciful',
  'Mortal', 'Naked', 'Noble', 'Obscure', 'Orange', 'Patient', 'Peculiar', 'Proud', 'Radiant', 'Reckless',
  'Rising', 'Rusted', 'Sacred', 'Scattered', 'Shadowed', 'Sharp', 'Slow', 'Solitary', 'Sorrowful', 'Stubborn',
  'Tangled', 'Tattered', 'Trembling', 'Unquiet', 'Untold', 'Veiled', 'Weary', 'Western', 'Whispering', 'Wicked',
] as const;

export const NOUNS = [
  'River', 'Garden', 'House', 'Kingdom', 'Shadow', 'Harbor', 'Mountain', 'Letter', 'Mirror', 'Winter',
  'Orchard', 'Island', 'Forest', 'Bridge', 'Lantern', 'Compass', 'Memory', 'Promise', 'Storm', 'Tide',
  'Archive', 'Atlas', 'Bell', 'Bird', 'Blade', 'Book', 'Border', 'Bone', 'Candle', 'Castle',
  'Cathedral', 'Child', 'City', 'Clock', 'Coast', 'Country', 'Crown', 'Dance', 'Daughter', 'Desert',
  'Door', 'Dream', 'Drum', 'Dust', 'Echo', 'Empire', 'Engine', 'Exile', 'Feather', 'Field',
  'Fire', 'Flood', 'Flower', 'Fortune', 'Fountain', 'Friend', 'Frontier', 'Ghost', 'Gift', 'Glass',
  'Hand', 'Heart', 'Heir', 'Hill', 'Horse', 'Hour', 'Hunter', 'Inheritance', 'Journey', 'Key',
  'King', 'Knife', 'Lake', 'Land', 'Language', 'Light', 'Lighthouse', 'Lion', 'Machine', 'Map',
  'Market', 'Meadow', 'Moon', 'Mother', 'Music', 'Night', 'Ocean', 'Painter', 'Palace', 'Passage',
  'Pilgrim', 'Prince', 'Prisoner', 'Queen', 'Rain', 'Road', 'Rose', 'Ruin', 'Sailor', 'Season',
  'Sea', 'Servant', 'Ship', 'Silence', 'Sister', 'Sky', 'Snow', 'Soldier', 'Song', 'Star',
  'Station', 'Stone', 'Stranger', 'Street', 'Summer', 'Sun', 'Sword', 'Teacher', 'Temple', 'Thief',
  'Thread', 'Throne', 'Tower', 'Train', 'Traveler', 'Tree', 'Valley', 'Village', 'Voice', 'Voyage',
  'War', 'Watch', 'Water', 'Wave', 'Widow', 'Wind', 'Window', 'Witness', 'Wolf', 'World',
  'Alchemist', 'Anchor', 'Apprentice', 'Arrow', 'Ashes', 'Banner', 'Beacon', 'Blossom', 'Brother', 'Cartographer',
  'Cellar', 'Chapel', 'Circle', 'Cloud', 'Comet', 'Confession', 'Courtyard', 'Covenant', 'Crossing', 'Dawn',
  'Diary', 'Dragon', 'Dusk', 'Ember', 'Falcon', 'Ferry', 'Garrison', 'Glacier', 'Harvest', 'Hearth',
  'Horizon', 'Inn', 'Jewel', 'Labyrinth', 'Ledger', 'Legacy', 'Library', 'Locket', 'Magician', 'Manuscript',
  'Mapmaker', 'Mill', 'Monastery', 'Nightingale', 'Oracle', 'Orphan', 'Parish', 'Pearl', 'Physician', 'Portrait',
  'Quarry', 'Raven', 'Refuge', 'Reckoning', 'Riddle', 'Sanctuary', 'Scholar', 'Sentinel', 'Serpent', 'Shore',
  'Smuggler', 'Sparrow', 'Spire', 'Storyteller', 'Tailor', 'Tapestry', 'Tavern', 'Threshold', 'Tinker', 'Vineyard',
] as const;

export const PLACES = [
  'Venice', 'Kyoto', 'Lisbon', 'Cairo', 'Prague', 'Dublin', 'Havana', 'Istanbul', 'Marrakesh', 'Vienna',
  'Samarkand', 'Trieste', 'Odessa', 'Valparaiso', 'Zanzibar', 'Edinburgh', 'Kraków', 'Seville', 'Bergen', 'Alexandria',
  'Avalon', 'Elsinore', 'Brightwater', 'Ravenmoor', 'Eastwick', 'Saltmarsh', 'Thornfield', 'Greywater', 'Ashford', 'Kingsbridge',
  'the North', 'the South', 'the Marshes', 'the Steppe', 'the Highlands', 'the Delta', 'the Archipelago', 'the Interior', 'the Coast', 'the Border',
] as const;

export const FIRST_NAMES = [
  'Ada', 'Agnes', 'Alice', 'Amara', 'Anders', 'Anna', 'Arthur', 'Aurelio', 'Beatrix', 'Benedict',
  'Bruno', 'Camille', 'Carmen', 'Catalina', 'Cecil', 'Chiara', 'Clara', 'Colm', 'Cora', 'Daniel',
  'Delphine', 'Dmitri', 'Dorothy', 'Edith', 'Eamon', 'Elena', 'Elias', 'Eliza', 'Emil', 'Emma',
  'Esther', 'Farah', 'Felix', 'Fiona', 'Frances', 'Gabriel', 'Greta', 'Hannah', 'Harriet', 'Hector',
  'Helen', 'Henry', 'Hugo', 'Ida', 'Ines', 'Ingrid', 'Isaac', 'Ivan', 'Jakob', 'James',
  'Jane', 'Jonah', 'Josephine', 'Julian', 'Karin', 'Kenji', 'Lara', 'Laszlo', 'Leila', 'Leo',
  'Lorenzo', 'Lucia', 'Ludmila', 'Magnus', 'Malik', 'Margaret', 'Marguerite', 'Maria', 'Mariam', 'Mateo',
  'Maya', 'Miriam', 'Nadia', 'Naomi', 'Nathaniel', 'Nora', 'Olga', 'Oliver', 'Olivia', 'Oscar',
  'Otto', 'Pablo', 'Paloma', 'Pieter', 'Priya', 'Rafael', 'Rosalind', 'Ruth', 'Samuel', 'Sara',
  'Selma', 'Simon', 'Sofia', 'Soren', 'Tamsin', 'Teodor', 'Thea', 'Theo', 'Tomas', 'Ursula',
  'Vera', 'Victor', 'Viola', 'Walter', 'Wilhelmina', 'Xavier', 'Yara', 'Yusuf', 'Zadie', 'Zora',
  'Adrian', 'Beatriz', 'Calvin', 'Dora', 'Edmund', 'Flora', 'Gideon', 'Hazel', 'Ingo', 'Juno',
  'Kasimir', 'Lotte', 'Matilda', 'Niamh', 'Orla', 'Perpetua', 'Quentin', 'Rhea', 'Silas', 'Tove',
  'Umberto', 'Vivian', 'Wendell', 'Ximena', 'Yannick', 'Zelda', 'Ambrose', 'Bianca', 'Cyrus', 'Delia',
] as const;

export const SURNAMES = [
  'Abernathy', 'Adeyemi', 'Albrecht', 'Alvarez', 'Andersen', 'Ashworth', 'Bachmann', 'Baker', 'Balogun', 'Barros',
  'Beaumont', 'Bellamy', 'Bergström', 'Blackwood', 'Bowen', 'Brandt', 'Brennan', 'Calloway', 'Carrington', 'Castellano',
  'Chandra', 'Chen', 'Clarke', 'Costa', 'Cruz', 'Dalton', 'Delacroix', 'Donnelly', 'Dubois', 'Duarte',
  'Eklund', 'Ellison', 'Esposito', 'Farrow', 'Fernandes', 'Fitzgerald', 'Fontaine', 'Fraser', 'Gallagher', 'Garcia',
  'Gerhardt', 'Goldberg', 'Gonzalez', 'Greenaway', 'Grimaldi', 'Hale', 'Hargreaves', 'Hartmann', 'Haverford', 'Hayes',
  'Holloway', 'Hughes', 'Ibrahim', 'Ishikawa', 'Ivanova', 'Jansen', 'Jovanović', 'Kaminski', 'Kavanagh', 'Keller',
  'Kowalski', 'Kuznetsov', 'Lambert', 'Larsen', 'Laurent', 'Lindqvist', 'Lockwood', 'Lombardi', 'Lowell', 'Lund',
  'MacLeod', 'Maddox', 'Marchetti', 'Mendes', 'Mercer', 'Moreau', 'Morrow', 'Nakamura', 'Novak', 'Nwosu',
  'Oakley', "O'Brien", 'Okafor', 'Olsen', 'Ortega', 'Osei', 'Pemberton', 'Petrov', 'Pryce', 'Quinn',
  'Ramsay', 'Reyes', 'Richter', 'Rinaldi', 'Rosenthal', 'Rossi', 'Sandoval', 'Schneider', 'Sato', 'Sinclair',
  'Sokolov', 'Sorensen', 'Stanhope', 'Sterling', 'Strand', 'Takahashi', 'Thorne', 'Torres', 'Tremblay', 'Underwood',
  'Valdez', 'Vance', 'Varga', 'Vasquez', 'Vogel', 'Wainwright', 'Walsh', 'Weber', 'Whitaker', 'Winslow',
  'Wolfe', 'Yamamoto', 'Yilmaz', 'Zhang', 'Zielinski', 'Achterberg', 'Bianchi', 'Crowther', 'Demir', 'Everett',
  'Falk', 'Grünewald', 'Halvorsen', 'Iqbal', 'Jaramillo', 'Kessler', 'Lindgren', 'Mbeki', 'Nieminen', 'Oyelaran',
  'Pellegrini', 'Rasmussen', 'Salazar', 'Tanaka', 'Ulrich', 'Villanueva', 'Westergaard', 'Xu', 'Yoon', 'Zamora',
  'Aldridge', 'Birch', 'Caldwell', 'Drummond', 'Easton', 'Forsythe', 'Gilchrist', 'Hawthorne', 'Irving', 'Jessop',
  'Kingsley', 'Langford', 'Merriweather', 'Northcott', 'Ormsby', 'Penhaligon', 'Radcliffe', 'Shelby', 'Treadwell', 'Upton',
] as const;

export const BRANCHES = [
  ['branch_central', 'Central Library'],
  ['branch_riverside', 'Riverside Branch'],
  ['branch_north_hill', 'North Hill Branch'],
  ['branch_old_town', 'Old Town Branch'],
  ['branch_harbor', 'Harbor Branch'],
  ['branch_eastgate', 'Eastgate Branch'],
  ['branch_westfield', 'Westfield Branch'],
  ['branch_university', 'University Branch'],
  ['branch_southside', 'Southside Branch'],
  ['branch_lakeview', 'Lakeview Branch'],
  ['branch_market_square', 'Market Square Branch'],
  ['branch_mobile', 'Mobile Library'],
] as const;
